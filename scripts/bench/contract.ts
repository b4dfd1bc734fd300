import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { ROOT } from "./processes.ts";

/**
 * Whether openapi/openapi.yaml declares the operation. Scenarios that need an operation the
 * contract does not have (yet) report "not available" instead of failing the run.
 */
export function contractHas(method: "get" | "put" | "post" | "patch" | "delete", path: string): boolean {
  const contract = parse(readFileSync(`${ROOT}openapi/openapi.yaml`, "utf8")) as {
    paths?: Record<string, Record<string, unknown>>;
  };
  return contract.paths?.[path]?.[method] !== undefined;
}
