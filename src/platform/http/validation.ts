import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

/**
 * Request validation with the contract's dialect (JSON Schema 2020-12, OpenAPI 3.1). Bodies are
 * validated as sent: no type coercion ("5" is not 5) and unknown properties are errors, not
 * silently dropped. Path and query values are strings on the wire, so those are coerced.
 * allErrors stays off: the first error is enough, and it bounds the work a hostile body causes.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const common = { useDefaults: true, removeAdditional: false, allErrors: false, strict: false } as const;
  const bodyAjv = new Ajv2020({ ...common, coerceTypes: false });
  const paramAjv = new Ajv2020({ ...common, coerceTypes: true });
  addFormats(bodyAjv);
  addFormats(paramAjv);
  return ({ schema, httpPart, contentType }) => {
    // A file (text/csv) arrives as a stream; the operation checks it as it reads it (csv-body.ts).
    if (httpPart === "body" && contentType === "text/csv") return () => true;
    // fastify-openapi-glue gives every schema with a recursive $ref (the filter language) the same
    // placeholder $id; the refs are document-local, so the id is dropped rather than shared.
    const { $id: _placeholder, ...rest } = schema as { $id?: string };
    const validate = (httpPart === "body" ? bodyAjv : paramAjv).compile(
      httpPart === "headers" ? lowerCaseHeaderNames(rest) : withoutFilterLanguage(rest),
    );
    const lists = httpPart === "querystring" ? listParameters(rest) : [];
    // Fastify reads the errors from the function it was given, so they are copied onto it.
    const guarded = (data: unknown) => {
      try {
        splitLists(data, lists);
        const valid = validate(data);
        guarded.errors = validate.errors;
        return valid;
      } catch (error) {
        // A body nested deeper than the validator's stack is invalid, not a server failure.
        if (!(error instanceof RangeError)) throw error;
        guarded.errors = [
          { keyword: "maxDepth", instancePath: "", schemaPath: "#", params: {}, message: "is nested too deeply" },
        ];
        return false;
      }
    };
    guarded.errors = null as typeof validate.errors;
    return guarded;
  };
}

/** Node lower-cases incoming header names; the contract spells them as on the wire (Idempotency-Key). */
function lowerCaseHeaderNames(schema: { properties?: Record<string, unknown>; required?: string[] }) {
  return {
    ...schema,
    properties: Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, s]) => [name.toLowerCase(), s])),
    ...(schema.required ? { required: schema.required.map((name) => name.toLowerCase()) } : {}),
  };
}

/**
 * The filter language (marked x-filter-language in the contract) is checked once, by parseFilter
 * in the service, which names the bad node and enforces the depth and size limits; ajv would check
 * it a second time and bury its error among the oneOf branches. Here any value passes on to it.
 * So does a schema marked x-checked-by-service (an activity entry): its service answers every bad
 * one with the same code and a pointer at its bad part.
 */
function withoutFilterLanguage<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(withoutFilterLanguage) as T;
  if (typeof schema !== "object" || schema === null) return schema;
  const marked = schema as Record<string, unknown>;
  if (marked["x-filter-language"] || marked["x-checked-by-service"]) return {} as T;
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withoutFilterLanguage(value)])) as T;
}

/**
 * The query parameters that are lists. The contract sends them comma-separated in one value
 * (`types=a,b`: style form, explode false), which the query string parser leaves as one string.
 */
function listParameters(schema: { properties?: Record<string, { type?: unknown }> }): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, property]) =>
    property.type === "array" ? [name] : [],
  );
}

function splitLists(data: unknown, lists: string[]): void {
  if (lists.length === 0 || typeof data !== "object" || data === null) return;
  const query = data as Record<string, unknown>;
  for (const name of lists) if (typeof query[name] === "string") query[name] = (query[name] as string).split(",");
}
