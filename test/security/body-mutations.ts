import fc from "fast-check";
import { deref, validatorAt } from "./contract-shapes.ts";
import * as V from "./hostile-values.ts";

/**
 * Body mutations driven by the contract: the seed body is walked together with its schema, and
 * each node gets the replacements its schema forbids (wrong type, too long, pattern or format
 * broken, out of range, too many or too few items, unknown or missing properties, …).
 */

export type Path = Array<string | number>;
export interface Site {
  path: Path;
  pointer: string;
  schema: any;
  value: unknown;
}

const token = (t: string) => t.replaceAll("~", "~0").replaceAll("/", "~1");
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** Marks a string to be written into the body text as a bare number (see serialize). */
export const RAW = "\u0001raw:";

/** Every node of the seed body with the schema that governs it (both the $ref and oneOf branches). */
export function sitesOf(pointer: string, value: unknown, path: Path = [], out: Site[] = []): Site[] {
  const { pointer: p, schema } = deref(pointer);
  if (!isObject(schema) || path.length > 12) return out;
  out.push({ path, pointer: p, schema, value });
  for (const combinator of ["oneOf", "anyOf"]) {
    (schema[combinator] as unknown[] | undefined)?.forEach((_, i) => {
      const branch = `${p}/${combinator}/${i}`;
      if (validatorAt(branch)(value)) sitesOf(branch, value, path, out);
    });
  }
  const properties = schema.properties as Record<string, unknown> | undefined;
  if (isObject(value)) {
    for (const key of Object.keys(value)) {
      const child = properties?.[key]
        ? `${p}/properties/${token(key)}`
        : isObject(schema.additionalProperties)
          ? `${p}/additionalProperties`
          : undefined;
      if (child) sitesOf(child, value[key], [...path, key], out);
    }
  }
  if (Array.isArray(value) && schema.items)
    value.slice(0, 10).forEach((v, i) => {
      sitesOf(`${p}/items`, v, [...path, i], out);
    });
  return out;
}

function withKey(object: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy = { ...object };
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

export function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...Path];
  const copy: any = Array.isArray(root) ? [...root] : { ...(root as object) };
  copy[head] = setAt(copy[head], rest, value);
  return copy;
}

/** Ways to make one node of the body invalid, each a replacement for the node. */
export function siteMutations(site: Site): Array<fc.Arbitrary<{ kind: string; value: unknown }>> {
  const { schema, value, pointer } = site;
  const invalid = (candidate: unknown) => !validatorAt(pointer)(candidate);
  const out: Array<fc.Arbitrary<{ kind: string; value: unknown }>> = [];
  const add = (kind: string, candidates: unknown[]) => {
    const kept = candidates.filter(invalid);
    if (kept.length > 0) out.push(fc.constantFrom(...kept).map((v) => ({ kind, value: v })));
  };
  add("wrongType", V.JSON_VALUES);
  if (typeof value === "string") {
    const enums = ((schema.enum as string[] | undefined) ?? []).flatMap((e) => [
      e.toLowerCase(),
      e.toUpperCase(),
      ` ${e}`,
    ]);
    add("badString", [...V.HOSTILE_STRINGS, "\u001f", "\u007f", "\t", "\n", "not-an-email", "a@", "@b.c", ...enums]);
    const max = schema.maxLength as number | undefined;
    if (max !== undefined) {
      const long = fc.array(fc.constantFrom(...V.STRING_UNITS), { minLength: max + 1, maxLength: max + 64 });
      out.push(long.map((units) => ({ kind: "tooLong", value: units.join("") })));
    }
  }
  if (typeof value === "number" || schema.type === "integer" || schema.type === "number") {
    const { minimum = 0, maximum = 1e9 } = schema as { minimum?: number; maximum?: number };
    add("outOfRange", [minimum - 1, maximum + 1, 1.5, -0.5, 2 ** 53, -(2 ** 53)]);
    out.push(fc.constantFrom(...V.RAW_NUMBERS).map((r) => ({ kind: "hugeNumber", value: `${RAW}${r}` })));
  }
  if (Array.isArray(value)) {
    const fill = value[0] ?? "x";
    if (schema.maxItems !== undefined) add("tooManyItems", [Array(schema.maxItems + 1).fill(fill)]);
    if (schema.minItems) add("tooFewItems", [[]]);
  }
  if (isObject(value)) {
    const declared = new Set(Object.keys(schema.properties ?? {}));
    if (schema.additionalProperties === false) {
      const keys = V.UNKNOWN_KEYS.filter((k) => !declared.has(k));
      const values = [...V.HOSTILE_STRINGS.slice(0, 8), 1, null, {}];
      out.push(
        fc.tuple(fc.constantFrom(...keys), fc.constantFrom(...values)).map(([k, v]) => ({
          kind: "unknownProperty",
          value: withKey(value, k, v),
        })),
      );
    }
    for (const key of (schema.required as string[] | undefined) ?? []) {
      if (key in value) add("missingRequired", [Object.fromEntries(Object.entries(value).filter(([k]) => k !== key))]);
    }
    if (schema.maxProperties !== undefined) {
      const many = Array.from({ length: schema.maxProperties + 1 }, (_, i) => [`k${i}`, "v"]);
      add("tooManyProperties", [{ ...value, ...Object.fromEntries(many) }]);
    }
    if (schema.propertyNames || isObject(schema.additionalProperties)) {
      const names = ["1abc", "_x", "a-b", "a".repeat(65), "é", "__proto__", "", " ", "' OR 1=1 --"];
      add(
        "badPropertyName",
        names.map((k) => withKey(value, k, "v")),
      );
      add(
        "badPropertyValue",
        [...V.JSON_VALUES, "a\u0000b", "x".repeat(1025)].map((v) => withKey(value, "zz", v)),
      );
    }
  }
  return out;
}

/** The body as JSON text; numbers that JSON.stringify cannot write are spliced in. */
export function serialize(body: unknown): string {
  return JSON.stringify(body).replace(/"\\u0001raw:([^"]*)"/g, "$1");
}

export function schemaValid(pointer: string, text: string): boolean {
  try {
    return validatorAt(pointer)(JSON.parse(text));
  } catch {
    return false;
  }
}
