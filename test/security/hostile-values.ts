/** Strings an attacker (or a broken client) sends: unicode edge cases and injection-looking text. */

export const UNICODE_EDGES = [
  "\ud800", // lone high surrogate
  "x\udc00y", // lone low surrogate
  "\u0000",
  "a\u0000b",
  "\u202eevil\u202c", // right-to-left override
  "\u200b\u200d\ufeff", // zero-width characters and a BOM
  "🎉", // 4-byte UTF-8
  "👩‍👩‍👧‍👦", // ZWJ sequence
  "e\u0301\u0301\u0301\u0301", // combining marks
  "\u0130stanbul", // İ lower-cases to two code points
  "Stra\u00dfe",
  "\u2028\u2029",
  "\ud835\udd18\ud835\udd2b\ud835\udd26", // mathematical letters
  "名前",
  "\u001b[31mred\u001b[0m", // terminal escapes
  "\r\nX-Injected: 1",
];

export const INJECTIONS = [
  "' OR 1=1 --",
  "'; DROP TABLE members; --",
  '" OR ""="',
  "$1",
  "%00",
  "%",
  "_",
  "\\",
  "../../etc/passwd",
  "..\\..\\windows\\win.ini",
  "{{7*7}}",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template injection probe, sent as is
  "${7*7}",
  "<script>alert(1)</script>",
  "__proto__",
  "constructor",
  "prototype",
  '{"$gt":""}',
  "%s%s%n",
  "null",
  "NaN",
];

/** Timestamps at and past the edges of what JavaScript and PostgreSQL can represent. */
export const EDGE_TIMESTAMPS = [
  "0000-01-01T00:00:00.000Z",
  "-000001-01-01T00:00:00.000Z",
  "+275760-09-13T00:00:00.000Z",
  "9999-12-31T23:59:59.999Z",
  "1970-01-01T00:00:00.000Z",
  "2020-02-30T00:00:00Z",
  "2020-01-01T24:00:00Z",
];

export const HOSTILE_STRINGS = [
  ...UNICODE_EDGES,
  ...INJECTIONS,
  ...EDGE_TIMESTAMPS,
  "",
  " ",
  "a".repeat(5000),
  "é".repeat(3000),
];

/** The values most likely to get past validation and break a query: swept over every string input. */
export const SWEEP_VALUES = [
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udc00y",
  "0000-01-01T00:00:00.000Z",
  "-000001-01-01T00:00:00.000Z",
];

/** Units long strings are made of (a unit is one or more code points). */
export const STRING_UNITS = ["a", "é", "🎉", "e\u0301", "\u202e", "'", "%", "\ud800", "\u0000", "名"];

/** Keys no contract object declares. */
export const UNKNOWN_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "isAdmin",
  "workspaceId",
  "' OR 1=1 --",
  "$where",
  "{{7*7}}",
  "\u0000",
  "🎉",
  "",
  "NAME",
  "name ",
];

/** Any JSON value; the generator keeps those the schema at the site rejects. */
export const JSON_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  "",
  "x",
  "' OR 1=1 --",
  "\ud800",
  [],
  ["x"],
  [null],
  [[]],
  {},
  { "": "" },
  { a: { b: { c: {} } } },
];

/** Numbers JSON.stringify cannot write, spliced into the body text as they are. */
export const RAW_NUMBERS = [
  "1e999",
  "-1e999",
  `1${"0".repeat(400)}`,
  "123456789012345678901234567890",
  "-0",
  "1.0000000000000001",
];

/** Bodies that are not JSON, or not JSON a parser should accept. */
export const MALFORMED_JSON = [
  "",
  " ",
  "{",
  "}",
  "[",
  '{"a":',
  "{'a':'b'}",
  '{"a":1,}',
  "{a:1}",
  '{"a":1} trailing',
  '{"a":1}{"b":2}',
  "NaN",
  "undefined",
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":01}',
  '{"a":"\\x41"}',
  '{"a":"\\u12"}',
  '{"a":"unterminated}',
  '"\\ud800',
  '{"__proto__":{"isAdmin":true}}',
  '{"constructor":{"prototype":{"isAdmin":true}}}',
  `${"[".repeat(100000)}`,
  `${'{"a":'.repeat(20000)}1${"}".repeat(20000)}`,
  "\u0000",
  "<xml/>",
  "name=x&memberIds=1",
];

/** Media types that are not application/json. */
export const WRONG_CONTENT_TYPES = [
  "text/plain",
  "text/json",
  "application/xml",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/problem+json",
  "application/jsonx",
  "application/octet-stream",
  "image/png",
];

/** encodeURIComponent, or nothing for a string it cannot encode (a lone surrogate). */
function encodable(text: string): string[] {
  try {
    return [encodeURIComponent(text)];
  } catch {
    return [];
  }
}

/** Percent-encoded path segments that are not a valid id, or name nothing. */
export const PATH_SEGMENTS = [
  ...[...INJECTIONS, ...UNICODE_EDGES].flatMap(encodable),
  "%ED%A0%80", // a UTF-16 surrogate encoded as UTF-8: not valid UTF-8
  "%FF",
  "%C0%AF", // overlong "/"
  "%",
  "%zz",
  "%2F",
  "a%2Fb",
  "..%2F..%2Fetc%2Fpasswd",
  "%252e%252e",
  encodeURIComponent("a".repeat(65)),
  encodeURIComponent("a".repeat(256)),
  "m".repeat(150), // a valid member id (1 to 255 characters) that names no member
  "aud_DoesNotExist000000",
  "mem_DoesNotExist000000",
  "merge",
  "preview",
  "",
];

/** Query values no cursor check is needed for: not a cursor's shape at all (the schema or the decoder refuses). */
export const GARBAGE_CURSORS = ["x", "a".repeat(513), "%00", "eyJ"];

/**
 * A cursor of a listing whose scope is `scope` (src/domain/cursor.ts; each listing makes its own:
 * `members:<workspace>`, the audience id, `audiences:<direction>`, `events:<workspace>`, …),
 * forged to break exactly one check: `refusedBy` names it, and `twin` is the same body at the
 * limit, which that check lets through. Sending both shows which check refused the forgery.
 */
export interface ForgedCursor {
  refusedBy: string;
  cursor: string;
  twin: string;
}

const MAX_CURSOR_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const encoded = (text: string) => Buffer.from(text, "utf8").toString("base64url");

/** Forged cursors of a listing ordered by (createdAt, id); `at` is a real position of it. */
export function forgedCursors(scope: string, at: { t: number; i: string } = { t: 0, i: "m" }): ForgedCursor[] {
  const body = (change: Record<string, unknown>) => encoded(JSON.stringify({ s: scope, ...at, ...change }));
  const valid = body({});
  const forged = (refusedBy: string, twin: Record<string, unknown>, change: Record<string, unknown>) => ({
    refusedBy,
    cursor: body(change),
    twin: body(twin),
  });
  return [
    // Buffer's base64url decoder skips such characters: only the character check refuses this.
    { refusedBy: "a character outside base64url", cursor: `${valid.slice(0, 4)}.${valid.slice(4)}`, twin: valid },
    { refusedBy: "not JSON", cursor: encoded(`${JSON.stringify({ s: scope, ...at })}}`), twin: valid },
    { refusedBy: "JSON null", cursor: encoded("null"), twin: valid },
    { refusedBy: "a JSON array", cursor: encoded(JSON.stringify([scope, at.t, at.i])), twin: valid },
    forged("another listing's scope", {}, { s: `${scope}0` }),
    forged("no scope", {}, { s: undefined }),
    forged("a time after the year 9999", { t: MAX_CURSOR_TIME }, { t: MAX_CURSOR_TIME + 1 }),
    forged("a time before 1970", { t: 0 }, { t: -1 }),
    forged("a fractional time", { t: 1 }, { t: 1.5 }),
    forged("a time as text", { t: 1 }, { t: "1" }),
    forged("an id of 256 characters", { i: "m".repeat(255) }, { i: "m".repeat(256) }),
    forged("an empty id", { i: "m" }, { i: "" }),
    forged("an id that is not a string", { i: "1" }, { i: 1 }),
    forged("an id with a NUL", { i: "m m" }, { i: "m\u0000m" }),
  ];
}

/** Forged cursors of a sequence (the event feed), as forgedCursors. */
export function forgedSequenceCursors(scope: string): ForgedCursor[] {
  const body = (q: unknown, s: unknown = scope) => encoded(JSON.stringify({ s, q }));
  return [
    { refusedBy: "JSON null", cursor: encoded("null"), twin: body(0) },
    { refusedBy: "another listing's scope", cursor: body(0, `${scope}0`), twin: body(0) },
    { refusedBy: "a negative place", cursor: body(-1), twin: body(0) },
    { refusedBy: "a fractional place", cursor: body(1.5), twin: body(1) },
    { refusedBy: "a place as text", cursor: body("1"), twin: body(1) },
    { refusedBy: "a place past the safe integers", cursor: body(2 ** 53), twin: body(0) },
  ];
}

/** Where each listing's cursors are scoped, for a request with these path and query values. */
export function cursorScope(operationId: string, path: Record<string, string>, query: Record<string, string> = {}) {
  const scopes: Record<string, string | undefined> = {
    listMembers: query.audienceId ?? `members:${path.workspaceId}`,
    listAudienceMembers: path.audienceId,
    listAudiences: `audiences:${query.sortDirection ?? "DESC"}`,
    listEvents: `events:${path.workspaceId}`,
    listWebhookDeliveries: `deliveries:${path.workspaceId}:${path.webhookId}`,
  };
  return scopes[operationId];
}
