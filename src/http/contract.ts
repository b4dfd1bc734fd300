import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

export const CONTRACT_PATH = fileURLToPath(new URL("../../openapi/openapi.yaml", import.meta.url));

interface Operation {
  operationId?: string;
  requestBody?: { required?: boolean };
}

/** The contract as a fresh object (fastify-openapi-glue dereferences what it is given in place). */
export function readContract(): { paths: Record<string, Record<string, Operation>> } {
  return parse(readFileSync(CONTRACT_PATH, "utf8"));
}

/** The operations whose request body the contract marks required. */
export function operationsRequiringBody(): Set<string> {
  const ids = new Set<string>();
  for (const item of Object.values(readContract().paths)) {
    for (const operation of Object.values(item)) {
      if (operation?.requestBody?.required && operation.operationId) ids.add(operation.operationId);
    }
  }
  return ids;
}
