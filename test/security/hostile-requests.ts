import fc from "fast-check";
import { RAW, schemaValid, serialize, setAt, siteMutations, sitesOf } from "./body-mutations.ts";
import { deref, type OperationShape } from "./contract-shapes.ts";
import * as V from "./hostile-values.ts";

/** A valid request for an operation: path parameter values (unencoded), query and body. */
export interface Seed {
  path: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
}

export interface HostileRequest {
  operationId: string;
  /** What was made hostile, e.g. "body.tooLong /members/0/email". */
  kind: string;
  method: string;
  /** Path and query, percent-encoded as sent. */
  url: string;
  headers: Record<string, string>;
  rawBody?: string;
  /** Whether the body still matches the contract's schema (only for body mutations). */
  schemaValid?: boolean;
}

interface Change {
  kind: string;
  body?: unknown;
  rawBody?: string | null;
  contentType?: string;
  path?: Record<string, string>;
  query?: string[];
  headers?: Record<string, string>;
}

function queryChanges(shape: OperationShape, seed: Seed): Array<fc.Arbitrary<Change>> {
  const out: Array<fc.Arbitrary<Change>> = [];
  // Forged with the listing's own scope, so that they reach the checks after the scope check.
  const scope = V.cursorScope(shape.operationId, seed.path, seed.query);
  const forged = scope === undefined ? [] : [...V.forgedCursors(scope), ...V.forgedSequenceCursors(scope)];
  const badCursors = [...V.GARBAGE_CURSORS, ...forged.map((f) => f.cursor)];
  for (const param of shape.params.filter((p) => p.in === "query")) {
    const { schema } = deref(param.pointer);
    const values = [
      ...["", " ", "abc", "-1", "0", "1.5", "1e3", "99999999999999999999", "NaN", "Infinity", "true", "null", "[]"],
      ...V.HOSTILE_STRINGS.map(safeEncode),
      "%00",
      "%FF",
      "%ED%A0%80",
      ...(schema.maxLength ? ["a".repeat(schema.maxLength + 1)] : []),
      ...(param.name === "after" || param.name === "before" ? badCursors : []),
    ];
    out.push(fc.constantFrom(...values).map((v) => ({ kind: `query.${param.name}`, query: [`${param.name}=${v}`] })));
    out.push(
      fc
        .constantFrom("1", "ASC", "x")
        .map((v) => ({ kind: `query.${param.name}.repeated`, query: [`${param.name}=${v}`, `${param.name}=${v}`] })),
    );
  }
  const names = shape.params.map((p) => p.name);
  if (names.includes("after") && names.includes("before")) {
    out.push(
      fc
        .constantFrom(...badCursors)
        .map((c) => ({ kind: "query.afterAndBefore", query: [`after=${c}`, `before=${c}`] })),
    );
  }
  for (const header of shape.params.filter((p) => p.in === "header")) {
    const bad = ["a b", "", "\u00e9", "x".repeat(256), "{{7*7}} x"];
    out.push(fc.constantFrom(...bad).map((v) => ({ kind: `header.${header.name}`, headers: { [header.name]: v } })));
  }
  return out;
}

function safeEncode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return "%ED%A0%80";
  }
}

const NOISE = [
  "__proto__=1",
  "constructor[prototype][isAdmin]=1",
  "%00=%00",
  "a[]=1&a[]=2",
  "isAdmin=true",
  "workspaceId=ws_x",
];

/** An arbitrary of hostile requests for one operation, built from its contract shape and a valid seed. */
export function hostileRequests(
  shape: OperationShape,
  seed: Seed,
  auth: Record<string, string>,
): fc.Arbitrary<HostileRequest> {
  const changes: Array<{ arbitrary: fc.Arbitrary<Change>; weight: number }> = [];
  const seedText = seed.body === undefined ? undefined : serialize(seed.body);
  if (shape.body && seedText !== undefined) {
    const sites = sitesOf(shape.body.pointer, seed.body);
    const perSite = sites.flatMap((site) =>
      siteMutations(site).map((m) =>
        m.map(({ kind, value }) => ({
          kind: `body.${kind} /${site.path.join("/")}`,
          body: setAt(seed.body, site.path, value),
        })),
      ),
    );
    const strings = sites.filter((s) => typeof s.value === "string");
    changes.push({ arbitrary: fc.oneof(...perSite), weight: 50 });
    if (strings.length > 0) {
      const hostile = fc.tuple(fc.constantFrom(...strings), fc.constantFrom(...V.HOSTILE_STRINGS));
      changes.push({
        arbitrary: hostile.map(([s, v]) => ({
          kind: `body.hostileValue /${s.path.join("/")}`,
          body: setAt(seed.body, s.path, v),
        })),
        weight: 20,
      });
    }
    const malformed = fc.oneof(
      fc.constantFrom(...V.MALFORMED_JSON),
      fc.integer({ min: 1, max: seedText.length - 1 }).map((i) => seedText.slice(0, i)),
      fc.constantFrom(...V.INJECTIONS).map((s) => `${seedText}${s}`),
    );
    changes.push({ arbitrary: malformed.map((rawBody) => ({ kind: "body.malformedJson", rawBody })), weight: 10 });
    if (shape.body.required)
      changes.push({ arbitrary: fc.constant({ kind: "body.missing", rawBody: null }), weight: 3 });
  }
  if (shape.method !== "GET" && (shape.body || shape.params.some((p) => p.in === "path"))) {
    const text = seedText ?? "{}";
    const kind = shape.body ? "contentType" : "unexpectedBody";
    const types = fc.constantFrom(...V.WRONG_CONTENT_TYPES);
    changes.push({ arbitrary: types.map((contentType) => ({ kind, rawBody: text, contentType })), weight: 8 });
    const huge = `{"x":"${"a".repeat(1_100_000)}"}`;
    changes.push({ arbitrary: fc.constant({ kind: "oversized", rawBody: huge }), weight: 1 });
  }
  for (const param of shape.params.filter((p) => p.in === "path")) {
    const segment = fc.constantFrom(...V.PATH_SEGMENTS);
    changes.push({
      arbitrary: segment.map((v) => ({ kind: `path.${param.name}`, path: { [param.name]: v } })),
      weight: 6,
    });
  }
  for (const change of queryChanges(shape, seed)) changes.push({ arbitrary: change, weight: 6 });
  if (changes.length === 0) {
    changes.push({ arbitrary: fc.constant({ kind: "noInput", query: [] }), weight: 1 });
  }
  return fc
    .tuple(fc.oneof(...changes), fc.subarray(NOISE, { maxLength: 2 }))
    .map(([change, noise]) => build(shape, seed, auth, change, noise));
}

function build(
  shape: OperationShape,
  seed: Seed,
  auth: Record<string, string>,
  change: Change,
  noise: string[],
): HostileRequest {
  const path = shape.path.replace(
    /\{(\w+)\}/g,
    (_, name: string) => change.path?.[name] ?? safeEncode(seed.path[name] ?? ""),
  );
  const seedQuery = Object.entries(seed.query ?? {})
    .filter(([name]) => !change.query?.some((q) => q.startsWith(`${name}=`)))
    .map(([name, value]) => `${name}=${safeEncode(value)}`);
  const query = [...seedQuery, ...(change.query ?? []), ...noise];
  const headers: Record<string, string> = { ...auth, ...change.headers };
  const request: HostileRequest = {
    operationId: shape.operationId,
    kind: change.kind,
    method: shape.method,
    url: query.length > 0 ? `${path}?${query.join("&")}` : path,
    headers,
  };
  const text =
    change.body !== undefined
      ? serialize(change.body)
      : change.rawBody === undefined
        ? seedTextOf(seed)
        : change.rawBody;
  if (text !== null && text !== undefined) {
    request.rawBody = text;
    headers["content-type"] = change.contentType ?? "application/json";
  }
  if (change.body !== undefined && shape.body && text) request.schemaValid = schemaValid(shape.body.pointer, text);
  return request;
}

/**
 * A systematic pass: each value put in turn into every string of the body, every query parameter
 * and every path parameter (one place at a time), whatever the random runs picked.
 */
export function sweepRequests(shape: OperationShape, seed: Seed, auth: Record<string, string>, values: string[]) {
  const changes: Change[] = [];
  const numbers = [0, -1, 1.5, -0.5, 1e308, ...V.RAW_NUMBERS.map((r) => `${RAW}${r}`)];
  if (shape.body && seed.body !== undefined) {
    const seen = new Set<string>();
    for (const site of sitesOf(shape.body.pointer, seed.body)) {
      const kind = `sweep.body /${site.path.join("/")}`;
      const swept = typeof site.value === "string" ? values : typeof site.value === "number" ? numbers : [];
      if (swept.length === 0 || seen.has(kind)) continue;
      seen.add(kind);
      for (const v of swept) changes.push({ kind, body: setAt(seed.body, site.path, v) });
    }
  }
  for (const param of shape.params) {
    const integer = deref(param.pointer).schema?.type === "integer";
    const swept = integer ? ["0", "-1", "1.5", "501", "1e3", "99999999999999999999", "NaN", "Infinity", ""] : [];
    for (const v of [...values.map(safeEncode), ...swept]) {
      if (param.in === "query") changes.push({ kind: `sweep.query.${param.name}`, query: [`${param.name}=${v}`] });
      if (param.in === "path") changes.push({ kind: `sweep.path.${param.name}`, path: { [param.name]: v } });
    }
  }
  return changes.map((change) => build(shape, seed, auth, change, []));
}

const seedTextOf = (seed: Seed) => (seed.body === undefined ? undefined : serialize(seed.body));
