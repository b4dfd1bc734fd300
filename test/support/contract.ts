import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { parse } from "yaml";

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const CONTRACT_ID = "contract";
const PROBLEM_POINTER = "#/components/schemas/Problem";

/** The contract is an arbitrary YAML document. */
type Json = any;

export interface Contract {
  document: Json;
  ajv: Ajv2020;
  validators: Map<string, ValidateFunction>;
  /** Path templates, each with one matcher per segment (null for a static segment). */
  routes: Array<{ template: string; segments: string[]; matchers: Array<RegExp | null> }>;
}

export interface ContractResponse {
  method: string;
  /** Path plus optional query, e.g. /v0/workspaces/ws_1/audiences?limit=3 */
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The raw response text. */
  body: string;
}

const contracts = new Map<string, Contract>();

/** Reads, parses and prepares the contract once per path. */
export function loadContract(path: URL | string = new URL("../../openapi/openapi.yaml", import.meta.url)): Contract {
  const key = path.toString();
  const cached = contracts.get(key);
  if (cached) return cached;
  const document = parse(readFileSync(path, "utf8"));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, CONTRACT_ID);
  const routes = Object.keys(document.paths ?? {}).map((template) => {
    const segments = template.split("/");
    const matchers = segments.map((s) =>
      s.includes("{") ? new RegExp(`^${s.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`) : null,
    );
    return { template, segments, matchers };
  });
  const contract = { document, ajv, validators: new Map(), routes };
  contracts.set(key, contract);
  return contract;
}

/** Every operation of the contract, in document order. */
export function documentedOperations(): Array<{ method: string; path: string; operationId: string }> {
  const { document } = loadContract();
  return Object.entries<Json>(document.paths ?? {}).flatMap(([path, item]) =>
    HTTP_METHODS.filter((m) => item[m]).map((m) => ({
      method: m.toUpperCase(),
      path,
      operationId: item[m].operationId,
    })),
  );
}

/**
 * The operation a request resolves to, if any. Among the templates that match the path and have
 * this method, a static segment beats a parameter at the left-most segment where they differ
 * (as in fastify's router: GET .../audiences/merge is getAudience, POST is mergeAudiences).
 */
export function resolveOperation(method: string, url: string): { path: string; operationId: string } | undefined {
  const { document, routes } = loadContract();
  const wanted = new URL(url, "http://contract.invalid").pathname.split("/");
  const m = method.toLowerCase();
  const rank = (r: Contract["routes"][number]) => r.matchers.map((x) => (x ? "1" : "0")).join("");
  const [best] = routes
    .filter((r) => document.paths[r.template][m] && r.segments.length === wanted.length)
    .filter((r) => r.segments.every((s, i) => (r.matchers[i] ? r.matchers[i].test(wanted[i] ?? "") : s === wanted[i])))
    .sort((a, b) => rank(a).localeCompare(rank(b)));
  return best && { path: best.template, operationId: document.paths[best.template][m].operationId };
}

/** Throws a readable Error unless the response is one the contract allows for this request. */
export function checkResponse(res: ContractResponse): void {
  const contract = loadContract();
  const operation = resolveOperation(res.method, res.url);
  if (!operation) {
    // Unknown route: the only allowed answer is a 404 route_not_found problem document.
    if (res.status !== 404)
      throw violation(res, [`no operation matches this method and path, so expected status 404, got ${res.status}`]);
    const problemContent = { "application/problem+json": { schema: { $ref: PROBLEM_POINTER } } };
    const body = checkContent(contract, res, problemContent, () => `${CONTRACT_ID}${PROBLEM_POINTER}`);
    if (body.code !== "route_not_found")
      throw violation(res, [
        `/code: expected "route_not_found" for an unknown route, got ${JSON.stringify(body.code)}`,
      ]);
    return;
  }

  const method = res.method.toLowerCase();
  const responses = contract.document.paths[operation.path][method].responses ?? {};
  let pointer = `#/paths/${escapeToken(operation.path)}/${method}/responses/${res.status}`;
  let response = responses[String(res.status)];
  if (!response) {
    const listed = Object.keys(responses).join(", ");
    throw violation(res, [
      `status ${res.status} is not documented for ${operation.operationId} (documented: ${listed})`,
    ]);
  }
  for (let hops = 0; response.$ref; hops++) {
    if (hops > 10 || !String(response.$ref).startsWith("#/"))
      throw violation(res, [`cannot follow response $ref ${response.$ref}`]);
    pointer = response.$ref;
    response = resolvePointer(contract.document, pointer);
  }
  checkHeaders(contract, res, response.headers ?? {}, pointer);
  if (!response.content) {
    if (res.body !== "")
      throw violation(res, [`${operation.operationId} ${res.status} declares no content, but the body is not empty`]);
    return;
  }
  checkContent(
    contract,
    res,
    response.content,
    (mediaType) => `${CONTRACT_ID}${pointer}/content/${escapeToken(mediaType)}/schema`,
  );
}

/** Each header the response declares: present when required, and valid against its schema. */
function checkHeaders(contract: Contract, res: ContractResponse, headers: Record<string, any>, pointer: string): void {
  const problems: string[] = [];
  for (const [name, given] of Object.entries(headers)) {
    // A header declared once under components/headers and named by $ref where it applies.
    const at = given.$ref ? String(given.$ref) : `${pointer}/headers/${escapeToken(name)}`;
    const declared = given.$ref ? resolvePointer(contract.document, at) : given;
    const raw = res.headers[name.toLowerCase()];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined) {
      if (declared.required) problems.push(`header ${name}: is required`);
      continue;
    }
    const ref = `${CONTRACT_ID}${at}/schema`;
    let validate = contract.validators.get(ref);
    if (!validate) {
      validate = contract.ajv.compile({ $ref: ref });
      contract.validators.set(ref, validate);
    }
    // Header values are text; a numeric schema is checked against the number the text spells.
    const typed = /^-?\d+(\.\d+)?$/.test(value) && declared.schema?.type !== "string" ? Number(value) : value;
    if (!validate(typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${validate.errors?.[0]?.message}`);
  }
  if (problems.length > 0) throw violation(res, problems);
}

/** The Error thrown for a response that breaks the contract. */
function violation(res: ContractResponse, problems: string[]): Error {
  const body = res.body.length > 500 ? `${res.body.slice(0, 500)}… (${res.body.length} chars)` : res.body;
  return new Error(
    `Response breaks the contract: ${res.method.toUpperCase()} ${res.url} -> ${res.status}\n` +
      problems.map((p) => `  - ${p}`).join("\n") +
      `\n  body: ${body === "" ? "(empty)" : body}`,
  );
}

/** Checks media type, JSON syntax, schema and (for problems) status; returns the parsed body. */
function checkContent(
  contract: Contract,
  res: ContractResponse,
  content: Record<string, Json>,
  schemaRef: (mediaType: string) => string,
): Json {
  const mediaType = headerValue(res.headers, "content-type")?.split(";")[0]?.trim().toLowerCase();
  const declared = Object.keys(content);
  if (!mediaType || !declared.includes(mediaType)) {
    throw violation(res, [
      `content-type ${mediaType ?? "(missing)"} is not one of the declared media types: ${declared.join(", ")}`,
    ]);
  }
  if (!isJsonType(mediaType)) return checkFile(contract, res, mediaType, schemaRef(mediaType));
  let body: Json;
  try {
    body = JSON.parse(res.body);
  } catch (error) {
    throw violation(res, [`body is not valid JSON (${(error as Error).message})`]);
  }
  if (content[mediaType]?.schema) {
    const validate = validatorFor(contract, schemaRef(mediaType));
    if (!validate(body)) throw violation(res, (validate.errors ?? []).map(describeError));
  }
  if (mediaType.endsWith("problem+json") && body?.status !== res.status) {
    throw violation(res, [
      `/status: the problem document says ${JSON.stringify(body?.status)}, but the HTTP status is ${res.status}`,
    ]);
  }
  return body;
}

const isJsonType = (mediaType: string) => mediaType === "application/json" || mediaType.endsWith("+json");

/**
 * A file (CSV, NDJSON): its text against the declared schema (a string), and NDJSON line by
 * line as JSON; returns the text.
 */
function checkFile(contract: Contract, res: ContractResponse, mediaType: string, schemaRef: string): string {
  if (mediaType === "application/x-ndjson") {
    const lines = res.body.split("\n");
    if (lines.pop() !== "") throw violation(res, ["NDJSON: the last line does not end with a newline"]);
    lines.forEach((line, i) => {
      try {
        JSON.parse(line);
      } catch (error) {
        throw violation(res, [`NDJSON line ${i + 1} is not valid JSON (${(error as Error).message})`]);
      }
    });
  }
  const validate = validatorFor(contract, schemaRef);
  if (!validate(res.body)) throw violation(res, (validate.errors ?? []).map(describeError));
  return res.body;
}

function validatorFor(contract: Contract, ref: string): ValidateFunction {
  let validate = contract.validators.get(ref);
  if (!validate) {
    validate = contract.ajv.compile({ $ref: ref });
    contract.validators.set(ref, validate);
  }
  return validate;
}

function describeError(error: ErrorObject): string {
  const params = error.params as Record<string, string>;
  if (error.keyword === "additionalProperties") {
    return `${error.instancePath}/${escapePointer(params.additionalProperty ?? "")}: is not allowed (additionalProperties: false)`;
  }
  if (error.keyword === "required")
    return `${error.instancePath}/${escapePointer(params.missingProperty ?? "")}: is required`;
  const detail = error.keyword === "enum" ? ` ${JSON.stringify(params.allowedValues)}` : "";
  return `${error.instancePath || "(root)"}: ${error.message}${detail}`;
}

function headerValue(headers: ContractResponse["headers"], name: string): string | undefined {
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  const value = entry?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/** RFC 6901 escaping of one token. */
function escapePointer(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** A JSON-pointer token usable inside a URI fragment ($ref). */
function escapeToken(token: string): string {
  return encodeURIComponent(escapePointer(token));
}

function resolvePointer(document: Json, pointer: string): Json {
  return pointer
    .slice(2)
    .split("/")
    .map((t) => decodeURIComponent(t).replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((node, token) => node?.[token], document);
}
