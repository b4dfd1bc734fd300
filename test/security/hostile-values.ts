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

/** Query values that a cursor parameter must refuse. */
export const BAD_CURSORS = [
  "x",
  "!!!",
  Buffer.from("{}").toString("base64url"),
  Buffer.from('{"s":"members","t":"x","i":"m"}').toString("base64url"),
  Buffer.from('{"s":"members","t":-1,"i":"m"}').toString("base64url"),
  Buffer.from('{"s":"members","t":1e20,"i":"m"}').toString("base64url"),
  Buffer.from('{"s":"members","t":0,"i":""}').toString("base64url"),
  Buffer.from('{"s":"members","t":0,"i":"\\u0000"}').toString("base64url"),
  Buffer.from('{"s":"members","t":0,"i":"\\ud800"}').toString("base64url"),
  Buffer.from("[1,2,3]").toString("base64url"),
  "a".repeat(513),
  "%00",
  "eyJ",
];
