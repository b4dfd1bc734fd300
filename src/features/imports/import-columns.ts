import { invalidCsv } from "../../domain/errors.ts";
import type { MemberInput } from "../../domain/member-identity.ts";

/** What one column of an import's file holds. */
export type Column =
  | { kind: "id" }
  | { kind: "email" }
  | { kind: "alternativeEmails" }
  | { kind: "field"; key: string };

/** A custom field's key, as the contract's MemberFields allows it. */
const FIELD_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/**
 * How a header name is quoted in an error: cut short, and characters that do not show (controls,
 * a byte order mark and other format characters) written as \u escapes.
 */
export const quoted = (name: string) =>
  JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name).replace(
    /\p{C}/gu,
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`,
  );

/**
 * Reads the header row: `id`, `email`, `alternativeEmails`, and any other name as a field key
 * (firstName, lastName, role and company among them). Refuses, with 400 invalid_csv and the
 * column named, a header that names neither id nor email, repeats a column or holds a name that
 * is not a field key.
 */
export function readHeader(names: string[]): Column[] {
  const seen = new Set<string>();
  const columns = names.map((name, index): Column => {
    if (seen.has(name)) throw invalidCsv(`The header names the column ${quoted(name)} twice.`);
    seen.add(name);
    if (name === "id" || name === "email" || name === "alternativeEmails") return { kind: name };
    if (!FIELD_KEY.test(name)) {
      // One byte order mark is dropped before the header is read; a second one is left in the name.
      const bom =
        index === 0 && name.startsWith("\uFEFF") ? " The file starts with more than one byte order mark." : "";
      throw invalidCsv(
        `Column ${index + 1} of the header, ${quoted(name)}, is not id, email, alternativeEmails or a field key ` +
          `(letters, digits and _, starting with a letter, at most 64 characters).${bom}`,
      );
    }
    return { kind: "field", key: name };
  });
  if (!seen.has("id") && !seen.has("email")) {
    throw invalidCsv(`The header must name an id or an email column; it names ${names.map(quoted).join(", ")}.`);
  }
  return columns;
}

/** A row's member input, or why it cannot be applied. */
export type RowReading = { input: MemberInput } | { rejected: string };

/**
 * The member input of one data row: empty cells are absent values, alternativeEmails are
 * `;`-separated, and addresses lose the spaces spreadsheets pad them with. `check` applies the
 * rules of the JSON API's MemberInput and says what is wrong, if anything.
 */
export function readRow(
  columns: Column[],
  values: string[],
  check: (input: MemberInput) => string | undefined,
): RowReading {
  if (values.length !== columns.length) {
    return { rejected: `expected ${columns.length} columns, found ${values.length}` };
  }
  const input: MemberInput = {};
  let fields: Record<string, string> | undefined;
  for (const [index, column] of columns.entries()) {
    const value = values[index] as string;
    if (value === "") continue;
    if (column.kind === "field") {
      fields ??= {};
      fields[column.key] = value;
    } else if (column.kind === "alternativeEmails") {
      const emails = value
        .split(";")
        .map((email) => email.trim())
        .filter((email) => email !== "");
      if (emails.length > 0) input.alternativeEmails = emails;
    } else if (column.kind === "email") {
      const email = value.trim();
      if (email !== "") input.email = email;
    } else {
      input.id = value;
    }
  }
  if (fields) input.fields = fields;
  if (input.id === undefined && input.email === undefined) return { rejected: "has neither an id nor an email" };
  const problem = check(input);
  return problem === undefined ? { input } : { rejected: problem };
}

/** A row that only has empty cells (a blank line, or a spreadsheet's trailing empty rows): not a row. */
export const isBlank = (values: string[]) => values.every((value) => value === "");
