import type { ValidateFunction } from "ajv/dist/2020.js";
import { documentedOperations, loadContract, resolveOperation } from "../support/contract.ts";

/** The contract is an arbitrary YAML document. */
type Json = any;

export interface ParamShape {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  /** JSON pointer (into the contract) of the parameter's schema. */
  pointer: string;
}

/** What an operation takes, read from the contract: where its inputs are and what they must be. */
export interface OperationShape {
  operationId: string;
  method: string;
  path: string;
  security: "workspaceKey" | "adminToken" | "none";
  params: ParamShape[];
  /** Pointer of the application/json request body schema, if the operation takes a body. */
  body?: { pointer: string; required: boolean };
}

const token = (t: string) => t.replaceAll("~", "~0").replaceAll("/", "~1");

/** The node at a JSON pointer ("#/a/b") of the contract. */
export function at(pointer: string): Json {
  return pointer
    .slice(2)
    .split("/")
    .filter((t) => t !== "")
    .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((node: Json, t) => node?.[t], loadContract().document);
}

/** Follows $ref from a pointer; returns the final pointer and the schema there. */
export function deref(pointer: string): { pointer: string; schema: Json } {
  let current = pointer;
  let node = at(current);
  for (let hops = 0; node && typeof node.$ref === "string"; hops++) {
    if (hops > 20) throw new Error(`$ref loop at ${pointer}`);
    current = node.$ref;
    node = at(current);
  }
  return { pointer: current, schema: node };
}

/** A validator for the schema at any pointer of the contract (compiled once). */
export function validatorAt(pointer: string): ValidateFunction {
  const contract = loadContract();
  const ref = `contract${pointer}`;
  let validate = contract.validators.get(ref);
  if (!validate) {
    validate = contract.ajv.compile({ $ref: ref });
    contract.validators.set(ref, validate);
  }
  return validate;
}

/** Every operation of the contract with its inputs, in document order. */
export function operationShapes(): OperationShape[] {
  const { document } = loadContract();
  return documentedOperations().map(({ method, path, operationId }) => {
    const m = method.toLowerCase();
    const base = `#/paths/${token(path)}`;
    const item = document.paths[path];
    const operation = item[m];
    const collect = (list: Json[] | undefined, prefix: string) =>
      (list ?? []).map((_param: Json, i: number) => {
        const { pointer, schema } = deref(`${prefix}/parameters/${i}`);
        return { name: schema.name, in: schema.in, required: Boolean(schema.required), pointer: `${pointer}/schema` };
      });
    const params: ParamShape[] = [...collect(item.parameters, base), ...collect(operation.parameters, `${base}/${m}`)];
    const security: Json[] = operation.security ?? document.security ?? [];
    const scheme = security.length === 0 ? "none" : Object.keys(security[0])[0];
    const content = operation.requestBody?.content?.["application/json"];
    return {
      operationId,
      method,
      path,
      security: scheme as OperationShape["security"],
      params,
      ...(content
        ? {
            body: {
              pointer: `${base}/${m}/requestBody/content/application~1json/schema`,
              required: Boolean(operation.requestBody.required),
            },
          }
        : {}),
    };
  });
}

const problemCodes = (): string[] => at("#/components/schemas/Problem/properties/code/enum");

/**
 * The problem codes the contract documents for this answer: the codes quoted in the response's
 * description (e.g. "The request is invalid (`invalid_request`, `malformed_json`, …)"). An
 * unknown route may only answer route_not_found.
 */
export function documentedCodes(method: string, url: string, status: number): string[] {
  const operation = resolveOperation(method, url);
  if (!operation) return status === 404 ? ["route_not_found"] : [];
  let response = at(`#/paths/${token(operation.path)}/${method.toLowerCase()}/responses/${status}`);
  while (response?.$ref) response = at(response.$ref);
  const quoted = [...String(response?.description ?? "").matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string);
  const known = new Set(problemCodes());
  return quoted.filter((code) => known.has(code));
}
