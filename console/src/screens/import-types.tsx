import type { components } from "@audience-service/client";
import { NAMED_FIELDS } from "./fields.tsx";

type FieldType = components["schemas"]["FieldType"];
const TYPES: FieldType[] = ["string", "number", "date", "boolean"];
/** Columns an import reads as the member's identity or named data, never as a custom field. */
const NOT_CUSTOM = ["id", "email", "alternativeEmails", ...NAMED_FIELDS];
const FIELD_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * The custom fields a CSV file's header names: the first line, split on commas outside quotes, a
 * byte order mark dropped. Only the first 64 KiB are read; a header longer than that names the
 * fields it fits, and the import itself says what is wrong with the rest.
 */
export async function customColumnsOf(file: File): Promise<string[]> {
  const head = (await file.slice(0, 65_536).text()).replace(/^\uFEFF/, "");
  const names: string[] = [];
  let name = "";
  let quoted = false;
  for (let i = 0; i < head.length; i++) {
    const c = head[i];
    if (quoted) {
      if (c === '"' && head[i + 1] === '"') {
        name += '"';
        i++;
      } else if (c === '"') quoted = false;
      else name += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      names.push(name);
      name = "";
    } else if (c === "\n" || c === "\r") break;
    else name += c;
  }
  names.push(name);
  return [...new Set(names.map((n) => n.trim()))].filter((n) => FIELD_KEY.test(n) && !NOT_CUSTOM.includes(n));
}

/** A type for each custom column of the file, chosen before its rows are applied. */
export function ColumnTypes({
  columns,
  types,
  onChange,
}: {
  columns: string[];
  types: Record<string, FieldType>;
  onChange(key: string, type: FieldType): void;
}) {
  if (columns.length === 0) return null;
  return (
    <fieldset className="column-types">
      <legend>Types of the file's fields</legend>
      {columns.map((key) => (
        <span key={key} className="inline-form">
          <label htmlFor={`column-type-${key}`}>
            <code>{key}</code>
          </label>
          <select
            id={`column-type-${key}`}
            value={types[key] ?? "string"}
            onChange={(event) => onChange(key, event.target.value as FieldType)}
          >
            {TYPES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </span>
      ))}
    </fieldset>
  );
}
