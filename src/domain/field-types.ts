/**
 * Typed custom fields: what each declared type accepts, and the value a rule compares. Values stay
 * strings in the API and in storage; a declared type is a promise that every stored value of the
 * field parses, which the database's casts (src/features/membership/rules/filter-sql.ts) rely on. Every
 * form accepted here is read to the same value by JavaScript and by PostgreSQL: numbers are
 * doubles of bounded magnitude (float8 refuses what overflows, JavaScript would not), dates have
 * an explicit offset and at most milliseconds.
 */
export type FieldType = "string" | "number" | "date" | "boolean";

export const FIELD_TYPES: readonly FieldType[] = ["string", "number", "date", "boolean"];

/** The declared types of a workspace's fields; a key not in it is a string. */
export type FieldTypes = ReadonlyMap<string, FieldType>;

export const typeOf = (types: FieldTypes, key: string): FieldType => types.get(key) ?? "string";

/**
 * A decimal number of at most 64 characters with an exponent of at most two digits: its size
 * stays far inside a double's range, where float8 would refuse the text (out of range) and
 * JavaScript round it to 0 or ∞. Both round the digits to the nearest double alike.
 */
export const NUMBER_PATTERN = "^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]{1,2})?$";
const NUMBER = new RegExp(NUMBER_PATTERN);

/** A number field's value, or undefined when the text is not one. */
export function parseNumber(text: string): number | undefined {
  if (text.length > 64 || !NUMBER.test(text)) return undefined;
  const value = Number(text);
  return value === 0 ? 0 : value;
}

/** A calendar date, or a date and time with an offset and at most milliseconds. */
export const DATE_PATTERN =
  "^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[tT]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\\.([0-9]{1,3}))?)?([zZ]|[+-][0-9]{2}:[0-9]{2}))?$";
const DATE = new RegExp(DATE_PATTERN);

/**
 * A date field's value as an instant (milliseconds since the epoch), or undefined: a calendar
 * date (its UTC midnight) or a date and time with an offset, in the years 0001 to 9999.
 */
export function parseDate(text: string): number | undefined {
  const parts = DATE.exec(text);
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second] = parts
    .slice(1, 7)
    .map((part) => (part === undefined ? 0 : Number(part))) as [number, number, number, number, number, number];
  const millis = parts[7] === undefined ? 0 : Number(parts[7].padEnd(3, "0"));
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const at = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  at.setUTCFullYear(year, month - 1, day);
  if (at.getUTCMonth() !== month - 1) return undefined;
  at.setUTCHours(hour, minute, second, millis);
  const offset = parts[8];
  if (offset === undefined || offset.toLowerCase() === "z") return at.getTime();
  const [hours, minutes] = offset.slice(1).split(":").map(Number) as [number, number];
  if (hours > 15 || minutes > 59) return undefined;
  const sign = offset.startsWith("-") ? -1 : 1;
  return at.getTime() - sign * (hours * 60 + minutes) * 60_000;
}

/** A boolean field's value, or undefined. */
export function parseBoolean(text: string): boolean | undefined {
  const folded = text.toLowerCase();
  return folded === "true" ? true : folded === "false" ? false : undefined;
}

/** Whether a non-empty value parses as the type ("" is no value, and fits any type). */
export function fitsType(type: FieldType, text: string): boolean {
  if (text === "" || type === "string") return true;
  if (type === "number") return parseNumber(text) !== undefined;
  if (type === "date") return parseDate(text) !== undefined;
  return parseBoolean(text) !== undefined;
}

/** What a value of the type looks like, for error messages. */
export const TYPE_FORMS: Record<FieldType, string> = {
  string: "any text",
  number: 'a number such as "42", "-3.5" or "1e3" (at most 64 characters)',
  date: 'a date ("2026-01-31") or a date and time with an offset ("2026-01-31T09:00:00Z")',
  boolean: '"true" or "false"',
};
