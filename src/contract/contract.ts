import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { PROJECT_ROOT } from "../platform/project-root.ts";

export const CONTRACT_PATH = join(PROJECT_ROOT, "openapi", "openapi.yaml");

interface Operation {
  operationId?: string;
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
  parameters?: { $ref?: string }[];
  responses?: Record<string, { headers?: Record<string, unknown> }>;
  "x-heavy"?: boolean;
  "x-body-limit"?: number;
}

type Contract = { paths: Record<string, Record<string, Operation>> };

// Parsed once per process: the YAML is large, and start-up reads it for several tables below.
let parsed: Contract | undefined;
const contract = (): Contract => {
  parsed ??= parse(readFileSync(CONTRACT_PATH, "utf8")) as Contract;
  return parsed;
};

/** The contract as a fresh object (fastify-openapi-glue dereferences what it is given in place). */
export function readContract(): Contract {
  return structuredClone(contract());
}

/** The operations whose request body the contract marks required. */
export function operationsRequiringBody(): Set<string> {
  const ids = new Set<string>();
  for (const item of Object.values(contract().paths)) {
    for (const operation of Object.values(item)) {
      if (operation?.requestBody?.required && operation.operationId) ids.add(operation.operationId);
    }
  }
  return ids;
}

/**
 * The heavy operations (x-heavy: true): those that evaluate a filter or sets over a whole
 * workspace, of which one API key runs a bounded number at once (heavy-requests.ts).
 */
export function heavyOperations(): Set<string> {
  const ids = new Set<string>();
  for (const item of Object.values(contract().paths)) {
    for (const operation of Object.values(item)) {
      if (operation?.["x-heavy"] === true && operation.operationId) ids.add(operation.operationId);
    }
  }
  return ids;
}

/**
 * The operations whose JSON body may be larger than BODY_LIMIT (x-body-limit: bytes): a batch the
 * contract allows (10,000 activities) must fit.
 */
export function bodyLimits(): Map<string, number> {
  const limits = new Map<string, number>();
  for (const item of Object.values(contract().paths)) {
    for (const operation of Object.values(item)) {
      const limit = operation?.["x-body-limit"];
      if (typeof limit === "number" && operation.operationId) limits.set(operation.operationId, limit);
    }
  }
  return limits;
}

/** The operations that take the Idempotency-Key header (every POST but a file upload, and declareField). */
export const operationsTakingIdempotencyKey = () => operationsTakingParameter("IdempotencyKey");

/**
 * The read operations: those that take the Consistency-Token header, and may be answered by a
 * replica (every GET but the probes, and the previews and insight that POST their question).
 */
export const readOperations = () => operationsTakingParameter("ConsistencyToken");

/**
 * The write operations: those whose success answers carry the Consistency-Token header. What is
 * neither (the health probes) touches no replica and answers no token.
 */
export function writeOperations(): Set<string> {
  const ids = new Set<string>();
  for (const item of Object.values(contract().paths)) {
    for (const operation of Object.values(item)) {
      const answers = Object.entries(operation?.responses ?? {});
      const carries = answers.some(
        ([status, answer]) => status.startsWith("2") && "Consistency-Token" in (answer.headers ?? {}),
      );
      if (carries && operation.operationId) ids.add(operation.operationId);
    }
  }
  return ids;
}

function operationsTakingParameter(name: string): Set<string> {
  const ids = new Set<string>();
  for (const item of Object.values(contract().paths)) {
    for (const operation of Object.values(item)) {
      const takes = operation?.parameters?.some((p) => p.$ref === `#/components/parameters/${name}`);
      if (takes && operation.operationId) ids.add(operation.operationId);
    }
  }
  return ids;
}

/** The operations whose request body the contract gives in this media type. */
export function operationsTaking(mediaType: string): Set<string> {
  const ids = new Set<string>();
  for (const item of Object.values(contract().paths)) {
    for (const operation of Object.values(item)) {
      if (operation?.requestBody?.content?.[mediaType] && operation.operationId) ids.add(operation.operationId);
    }
  }
  return ids;
}

/**
 * Every media type the contract names, for requests or answers (the keys of its `content`
 * objects; a media type has a slash, a schema property called content does not).
 */
export function mediaTypesNamed(): Set<string> {
  const named = new Set<string>();
  const walk = (node: unknown): void => {
    if (typeof node !== "object" || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === "content" && typeof value === "object" && value !== null && !Array.isArray(value)) {
        for (const type of Object.keys(value)) if (type.includes("/")) named.add(type);
      }
      walk(value);
    }
  };
  walk(contract());
  return named;
}
