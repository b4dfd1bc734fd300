import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { components } from "../../../generated/api.d.ts";
import { readContract } from "../../contract/contract.ts";
import { BadRequestError } from "../../domain/errors.ts";
import { plainMessage } from "../../domain/validation-words.ts";

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

type ActivityInput = components["schemas"]["ActivityInput"];
export type PropertyValue = string | number | boolean;

/** An entry that passed the check: its member by id or by e-mail, and when it occurred. */
export interface CheckedActivity {
  id: string | undefined;
  memberId: string | undefined;
  email: string | undefined;
  type: string;
  occurredAt: Date;
  /** Null when it has none (an empty object is not stored). */
  properties: Record<string, PropertyValue> | null;
}

/** The largest entry accepted, as JSON in UTF-8. */
export const MAX_ENTRY_BYTES = 4096;
/** How far ahead of the server's clock an activity may be said to have occurred (clocks differ). */
export const MAX_AHEAD_MS = 5 * 60_000;

/**
 * Checks every entry of an ingest against the contract's ActivityInput (compiled once) and the
 * rules the schema cannot state: exactly one of memberId and email, at most 4 KiB, not more than
 * five minutes ahead of `now`. The first bad entry refuses the request (400 invalid_activity)
 * with a pointer at its bad part; nothing is written before this passes.
 */
export function createIngestCheck(): (entries: unknown[], now: number) => CheckedActivity[] {
  let validate: ValidateFunction<ActivityInput> | undefined;
  return (entries, now) => {
    // Compiled at the first ingest, not at start: most processes never receive one.
    validate ??= compile();
    return entries.map((entry, index) => checkEntry(validate as ValidateFunction<ActivityInput>, entry, index, now));
  };
}

function compile(): ValidateFunction<ActivityInput> {
  const ajv = new Ajv2020({ strict: false, allErrors: false, coerceTypes: false });
  addFormats(ajv);
  ajv.addSchema(readContract(), "contract");
  return ajv.compile<ActivityInput>({ $ref: "contract#/components/schemas/ActivityInput" });
}

function checkEntry(validate: ValidateFunction<ActivityInput>, entry: unknown, index: number, now: number) {
  // The entry's pointer is spelled out only for a refusal (most batches have none).
  const at = () => `/body/activities/${index}`;
  if (!validate(entry)) {
    const error = validate.errors?.[0];
    throw refused(`${at()}${pointerOf(error)}`, messageOf(error));
  }
  if ((entry.memberId === undefined) === (entry.email === undefined)) {
    throw refused(at(), "must name its member by exactly one of memberId and email");
  }
  if (jsonBytesAtMost(entry) > MAX_ENTRY_BYTES && Buffer.byteLength(JSON.stringify(entry)) > MAX_ENTRY_BYTES) {
    throw refused(at(), `is larger than ${MAX_ENTRY_BYTES} bytes as JSON`);
  }
  const occurredAt = entry.occurredAt === undefined ? new Date(now) : new Date(entry.occurredAt);
  if (Number.isNaN(occurredAt.getTime())) throw refused(`${at()}/occurredAt`, "is not a valid date-time");
  if (occurredAt.getTime() > now + MAX_AHEAD_MS) {
    throw refused(`${at()}/occurredAt`, "is more than 5 minutes in the future");
  }
  const properties = entry.properties && Object.keys(entry.properties).length > 0 ? entry.properties : null;
  return {
    id: entry.id,
    memberId: entry.memberId,
    email: entry.email,
    type: entry.type,
    occurredAt,
    properties: properties as Record<string, PropertyValue> | null,
  };
}

/** The most bytes a JSON number takes (-1.2345678901234567e-308). */
const NUMBER_BYTES = 24;

/**
 * An upper bound of a checked entry's size as JSON in UTF-8, without writing it: a UTF-16 unit
 * takes at most 6 bytes (escaped as \uXXXX), a number at most NUMBER_BYTES, a key its quotes,
 * colon and comma. Only an entry over the limit by this bound is written out to be measured
 * (stringifying every entry of a batch was a tenth of its check).
 */
function jsonBytesAtMost(value: unknown): number {
  if (typeof value === "string") return 2 + 6 * value.length;
  if (typeof value !== "object" || value === null) return NUMBER_BYTES;
  let bytes = 2;
  for (const [key, item] of Object.entries(value)) bytes += 4 + 6 * key.length + jsonBytesAtMost(item);
  return bytes;
}

/** Where in the entry the first error is: an unknown member is named by its own pointer. */
function pointerOf(error: ErrorObject | undefined): string {
  if (!error) return "";
  if (error.keyword === "additionalProperties")
    return `${error.instancePath}/${String(error.params.additionalProperty)}`;
  return error.instancePath;
}

function messageOf(error: ErrorObject | undefined): string {
  if (!error) return "is not a valid activity";
  // A property value of another JSON type fails each branch of its oneOf; say what it may be.
  const isValue = /^\/properties\/[^/]+$/.test(error.instancePath);
  if (isValue && (error.keyword === "type" || error.keyword === "oneOf"))
    return "must be a string, a number or a boolean";
  if (error.keyword === "propertyNames")
    return "has a key that is not a letter followed by up to 63 letters, digits or _";
  if (error.keyword === "additionalProperties") return "is not a member of an activity";
  return plainMessage(error);
}

const refused = (pointer: string, message: string) =>
  new BadRequestError("invalid_activity", `${pointer.slice("/body/".length)} ${message}.`, [{ pointer, message }]);
