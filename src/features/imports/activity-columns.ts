import { invalidCsv } from "../../domain/errors.ts";
import { quoted } from "./import-columns.ts";

/** What one column of an activity file holds. */
export type ActivityColumn =
  | { kind: "memberId" }
  | { kind: "email" }
  | { kind: "type" }
  | { kind: "occurredAt" }
  | { kind: "id" }
  | { kind: "property"; key: string };

/** A property's key, as the contract's ActivityInput allows it. */
const PROPERTY_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const PREFIX = "properties.";
/** A cell that reads as a JSON number (no leading zeros, no spaces, no Infinity or NaN). */
const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * Reads an activity file's header: memberId, email, type, occurredAt, id and properties.<key>.
 * Refuses, with 400 invalid_csv and the column named, a header without type or without memberId
 * and email, a repeated column, or any other name.
 */
export function readActivityHeader(names: string[]): ActivityColumn[] {
  const seen = new Set<string>();
  const columns = names.map((name, index): ActivityColumn => {
    if (seen.has(name)) throw invalidCsv(`The header names the column ${quoted(name)} twice.`);
    seen.add(name);
    switch (name) {
      case "memberId":
      case "email":
      case "type":
      case "occurredAt":
      case "id":
        return { kind: name };
    }
    const key = name.startsWith(PREFIX) ? name.slice(PREFIX.length) : undefined;
    if (key === undefined || !PROPERTY_KEY.test(key)) {
      throw invalidCsv(
        `Column ${index + 1} of the header, ${quoted(name)}, is not memberId, email, type, occurredAt, id or ` +
          "properties.<key> (a key of letters, digits and _, starting with a letter, at most 64 characters).",
      );
    }
    return { kind: "property", key };
  });
  if (!seen.has("type")) throw invalidCsv("The header of an activity file must name a type column.");
  if (!seen.has("memberId") && !seen.has("email")) {
    throw invalidCsv("The header of an activity file must name a memberId or an email column.");
  }
  return columns;
}

/** A row's activity entry (as ingestActivities takes one), or why it cannot be applied. */
export type ActivityRowReading = { entry: Record<string, unknown> } | { rejected: string };

/**
 * The entry of one data row: empty cells are absent values, an e-mail loses the spaces
 * spreadsheets pad it with, and a property's cell is a number or a boolean when it reads as one
 * in JSON (`12.5`, `true`), else the string as written. The entry is checked by the caller, as
 * an ingest's entries are.
 */
export function readActivityRow(columns: ActivityColumn[], values: string[]): ActivityRowReading {
  if (values.length !== columns.length) {
    return { rejected: `expected ${columns.length} columns, found ${values.length}` };
  }
  const entry: Record<string, unknown> = {};
  let properties: Record<string, string | number | boolean> | undefined;
  for (const [index, column] of columns.entries()) {
    const value = values[index] as string;
    if (value === "") continue;
    if (column.kind === "property") {
      properties ??= {};
      properties[column.key] = propertyValue(value);
    } else if (column.kind === "email") {
      const email = value.trim();
      if (email !== "") entry.email = email;
    } else {
      entry[column.kind] = value;
    }
  }
  if (properties) entry.properties = properties;
  if (entry.memberId === undefined && entry.email === undefined)
    return { rejected: "has neither a memberId nor an email" };
  return { entry };
}

function propertyValue(cell: string): string | number | boolean {
  if (cell === "true") return true;
  if (cell === "false") return false;
  if (JSON_NUMBER.test(cell)) {
    const number = Number(cell);
    if (Number.isFinite(number)) return number;
  }
  return cell;
}
