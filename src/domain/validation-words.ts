/**
 * Request validation errors (ajv's, against the contract) in words a person can act on: the
 * contract's limits named ("must be at most 200 characters long"), never a regular expression or
 * ajv's own phrasing ("must NOT have fewer than 1 characters"). Every client, the console and the
 * CLI included, shows these words as they come.
 */
export interface AjvError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  message?: string;
  params: Record<string, unknown>;
  /** Set on the errors of a property name (propertyNames): the name that was refused. */
  propertyName?: string;
}

/**
 * What each of the contract's patterns asks for. test/unit/validation-words.test.ts reads every
 * pattern in openapi/openapi.yaml and fails on one missing here, so a new pattern gets its words.
 */
export const PATTERN_WORDS: Readonly<Record<string, string>> = {
  "^[A-Za-z0-9_-]{1,64}$": "must be an identifier of 1 to 64 letters, digits, _ or -",
  "^[^\\x00-\\x1F\\x7F]+$": "must not be empty or hold control characters (line breaks, tabs)",
  "^[^\\x00-\\x1F\\x7F]*\\S[^\\x00-\\x1F\\x7F]*$":
    "must hold a character other than spaces, and no control characters (line breaks, tabs)",
  "^[^\\x00]*$": "must not hold a NUL character",
  "^[A-Za-z][A-Za-z0-9_]{0,63}$": "must be a field key: a letter, then at most 63 letters, digits or _",
  "^[\\x21-\\x7E]+$": "must be visible ASCII characters, without spaces",
  "^[0-9]+$": "must be digits only",
  "^[Hh][Tt][Tt][Pp][Ss]?://": "must be an http:// or https:// URL",
  "^[A-Za-z0-9_.:-]{1,100}$": "must be 1 to 100 letters, digits or the characters _ . : -",
  "^evt_[A-Za-z0-9]{20}$": "must be an event id: evt_ and 20 letters or digits",
  "^whsec_[A-Za-z0-9+/=]+$": "must be a signing secret: whsec_ and a base64 key",
  "^(id|email|anyEmail|createdAt|audience|fields\\.[A-Za-z][A-Za-z0-9_]{0,63})$":
    "must be id, email, anyEmail, createdAt, audience or fields.<key>",
  "^(type|properties\\.[A-Za-z][A-Za-z0-9_]{0,63})$": "must be type or properties.<key>",
};

const FORMAT_WORDS: Readonly<Record<string, string>> = {
  "date-time": "must be a date and time, such as 2026-11-23T10:00:00Z",
  date: "must be a date, such as 2026-11-23",
  email: "must be an e-mail address",
  uri: "must be an absolute URL",
};

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: "text",
  integer: "a whole number",
  number: "a number",
  boolean: "true or false",
  array: "a list",
  object: "an object",
  null: "null",
};

const count = (value: unknown) => Number(value).toLocaleString("en-US");
const plural = (value: unknown, one: string, many: string) => `${count(value)} ${Number(value) === 1 ? one : many}`;
const quoted = (value: unknown) => (typeof value === "string" ? `"${value}"` : JSON.stringify(value));

/** One ajv error as the words after its value's name: "must not be empty". */
export function plainMessage(error: AjvError): string {
  const { params } = error;
  switch (error.keyword) {
    case "type": {
      const types = Array.isArray(params.type) ? params.type : String(params.type).split(",");
      return `must be ${types.map((type) => TYPE_WORDS[String(type)] ?? String(type)).join(" or ")}`;
    }
    case "minLength":
      return Number(params.limit) === 1
        ? "must not be empty"
        : `must be at least ${plural(params.limit, "character", "characters")} long`;
    case "maxLength":
      return `must be at most ${plural(params.limit, "character", "characters")} long`;
    case "pattern": {
      const words = PATTERN_WORDS[String(params.pattern)] ?? "is not in the accepted form";
      return error.propertyName === undefined ? words : `has the key ${quoted(error.propertyName)}, which ${words}`;
    }
    case "format":
      return FORMAT_WORDS[String(params.format)] ?? `must be a valid ${String(params.format)}`;
    case "enum": {
      const allowed = (params.allowedValues as unknown[] | undefined) ?? [];
      return allowed.length <= 12
        ? `must be one of ${allowed.map(quoted).join(", ")}`
        : "is not one of the accepted values";
    }
    case "const":
      return `must be ${quoted(params.allowedValue)}`;
    case "minimum":
      return `must be at least ${count(params.limit)}`;
    case "exclusiveMinimum":
      return `must be more than ${count(params.limit)}`;
    case "maximum":
      return `must be at most ${count(params.limit)}`;
    case "exclusiveMaximum":
      return `must be less than ${count(params.limit)}`;
    case "multipleOf":
      return `must be a multiple of ${count(params.multipleOf)}`;
    case "minItems":
      return Number(params.limit) === 1
        ? "must not be an empty list"
        : `must hold at least ${plural(params.limit, "item", "items")}`;
    case "maxItems":
      return `must hold at most ${plural(params.limit, "item", "items")}`;
    case "uniqueItems":
      return `must not hold the same value twice (items ${String(params.j)} and ${String(params.i)} are equal)`;
    case "minProperties":
      return Number(params.limit) === 1
        ? "must not be empty: give at least one property"
        : `must have at least ${plural(params.limit, "property", "properties")}`;
    case "maxProperties":
      return `must have at most ${plural(params.limit, "property", "properties")}`;
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not a known property";
    case "maxDepth":
      return "is nested too deeply";
    default:
      return "is not valid here";
  }
}

/** A key as a JSON Pointer's token (RFC 6901): "~" as "~0", "/" as "~1"; plainName reads it back. */
export const pointerToken = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * A pointer into the request as a person names the value: "/body/members/0/email" is
 * "members[0].email", "/query/limit" is "the query parameter limit", "/body" is "the body".
 */
export function plainName(pointer: string): string {
  const [, part = "", ...rest] = pointer.split("/");
  const path = rest
    .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((token, index) => (/^\d+$/.test(token) ? `[${token}]` : index === 0 ? token : `.${token}`))
    .join("");
  switch (part) {
    case "body":
      return path === "" ? "The body" : path;
    case "query":
      return path === "" ? "The query" : `The query parameter ${path}`;
    case "headers":
      return path === "" ? "The headers" : `The header ${path}`;
    case "params":
      return path === "" ? "The path" : `The path parameter ${path}`;
    default:
      return pointer;
  }
}
