import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { components, ProblemCode } from "@audience-service/client";
import { afterEach, expect } from "vitest";
import { formatApiKey } from "../../src/domain/api-key.ts";
import { newId, randomBase62 } from "../../src/domain/ids.ts";
import { checkResponse } from "../support/contract.ts";

type Import = components["schemas"]["Import"];
type AudienceListItem = components["schemas"]["AudienceListItem"];

/**
 * A stand-in for the Audience Service while its import and export operations are built on other
 * branches: a node:http server that answers the operations the CLI calls as the contract says.
 * Every JSON answer is checked against the contract (a violation is recorded, and the tests
 * assert there is none). Import jobs follow a script: each getImport moves the job one step on.
 */
export interface FakeServiceOptions {
  audiences?: Array<{ name: string; isArchived?: boolean }>;
  /** The job's states, one per getImport; the last one repeats (a running one keeps it running). */
  jobSteps?: Array<Partial<Import>>;
  /** Answer createImport with this problem instead of a job. */
  refuseImport?: { status: number; code: ProblemCode; detail: string };
  /** The file that listMembers / listAudienceMembers serve, in chunks of 64 KiB. */
  file?: Buffer;
  /** Send the file but never end the response, as a server that stalls midway would. */
  stallFile?: boolean;
  /** The totalCount of their JSON pages. */
  totalCount?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

export interface FakeService {
  baseUrl: string;
  workspaceId: string;
  apiKey: string;
  audiences: AudienceListItem[];
  requests: RecordedRequest[];
  violations: string[];
  /** The requests with this method whose path contains this part. */
  requestsTo(method: string, pathPart: string): RecordedRequest[];
  /** Stops it and drops every connection, midway or not; closing again does nothing. */
  close(): Promise<void>;
}

const CHUNK = 64 * 1024;

export async function startFakeService(options: FakeServiceOptions = {}): Promise<FakeService> {
  const workspaceId = `ws_${randomBase62(20)}`;
  const apiKey = formatApiKey({ workspaceId, keyId: `key_${randomBase62(20)}`, secret: randomBase62(32) });
  const audiences: AudienceListItem[] = (options.audiences ?? []).map(({ name, isArchived = false }) => ({
    id: newId("aud"),
    createdAt: new Date().toISOString(),
    name,
    isArchived,
  }));
  const jobs = new Map<string, { job: Import; polls: number }>();
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];

  const send = (req: RecordedRequest, res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    const type = status >= 400 ? "application/problem+json" : "application/json";
    try {
      const url = `${req.path}${req.query.size > 0 ? `?${req.query}` : ""}`;
      checkResponse({ method: req.method, url, status, headers: { "content-type": type }, body: text });
    } catch (error) {
      violations.push((error as Error).message);
    }
    res.writeHead(status, { "content-type": type }).end(text);
  };
  const problem = (req: RecordedRequest, res: ServerResponse, status: number, code: ProblemCode, detail: string) =>
    send(req, res, status, { type: `urn:problem-type:audience-service:${code}`, title: code, status, detail, code });

  async function serveFile(req: RecordedRequest, res: ServerResponse) {
    const accept = req.headers.accept ?? "";
    if (!accept.includes("text/csv") && !accept.includes("application/x-ndjson")) {
      return send(req, res, 200, {
        totalCount: options.totalCount ?? 0,
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: "", endCursor: "" },
        results: [],
      });
    }
    const file = options.file ?? Buffer.alloc(0);
    res.writeHead(200, {
      "content-type": accept.includes("text/csv") ? "text/csv; charset=utf-8" : "application/x-ndjson",
    });
    for (let at = 0; at < file.length; at += CHUNK) {
      if (!res.write(file.subarray(at, at + CHUNK))) await once(res, "drain");
    }
    if (!options.stallFile) res.end();
  }

  function advance(id: string): Import | undefined {
    const entry = jobs.get(id);
    if (!entry) return undefined;
    const steps = options.jobSteps ?? [{ status: "succeeded" }];
    if (entry.job.status === "queued" || entry.job.status === "running") {
      const step = steps[Math.min(entry.polls, steps.length - 1)];
      entry.polls++;
      entry.job = { ...entry.job, ...step };
      if (entry.job.status !== "running" && entry.job.status !== "queued")
        entry.job.finishedAt ??= new Date().toISOString();
    }
    return entry.job;
  }

  async function route(req: RecordedRequest, res: ServerResponse) {
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return problem(req, res, 401, "unauthorized", "Send a valid API key as: Authorization: Bearer <key>");
    }
    const [, , , ws, collection, id, sub] = req.path.split("/");
    if (ws !== workspaceId) return problem(req, res, 403, "forbidden", "This API key cannot act on this workspace.");
    const key = `${req.method} ${collection}${id ? "/:id" : ""}${sub ? `/${sub}` : ""}`;
    switch (key) {
      case "GET audiences": {
        const term = (req.query.get("search") ?? "").toLowerCase();
        const archived = req.query.get("includeArchived") === "true";
        const results = audiences.filter((a) => a.name.toLowerCase().includes(term) && (archived || !a.isArchived));
        return send(req, res, 200, { results });
      }
      case "POST audiences": {
        const { name } = JSON.parse(req.body.toString()) as { name: string };
        const audience = { id: newId("aud"), createdAt: new Date().toISOString(), name, isArchived: false };
        audiences.push(audience);
        return send(req, res, 201, { id: audience.id });
      }
      case "POST imports": {
        if (options.refuseImport) {
          const { status, code, detail } = options.refuseImport;
          return problem(req, res, status, code, detail);
        }
        const job: Import = {
          id: `imp_${randomBase62(20)}`,
          kind: req.query.get("kind") === "activities" ? "activities" : "members",
          audienceId: req.query.get("audienceId"),
          status: "queued",
          bytes: req.body.length,
          ...{ rowsRead: 0, created: 0, merged: 0, unchanged: 0, rejected: 0, errors: [], failureReason: null },
          ...{ accepted: 0, duplicates: 0, expired: 0 },
          createdAt: new Date().toISOString(),
          finishedAt: null,
        };
        jobs.set(job.id, { job, polls: 0 });
        return send(req, res, 202, job);
      }
      case "GET imports/:id": {
        const job = advance(id as string);
        return job ? send(req, res, 200, job) : problem(req, res, 404, "import_not_found", "No such import.");
      }
      case "DELETE imports/:id": {
        const entry = jobs.get(id as string);
        if (!entry) return problem(req, res, 404, "import_not_found", "No such import.");
        if (entry.job.status !== "queued" && entry.job.status !== "running" && entry.job.status !== "cancelled") {
          return problem(req, res, 409, "import_finished", "The import has already finished.");
        }
        entry.job = { ...entry.job, status: "cancelled", finishedAt: entry.job.finishedAt ?? new Date().toISOString() };
        return send(req, res, 200, entry.job);
      }
      case "GET members":
      case "GET audiences/:id/members":
        return serveFile(req, res);
      default:
        return problem(req, res, 404, "route_not_found", `No route ${req.method} ${req.path}.`);
    }
  }

  const server = createServer(async (incoming, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const url = new URL(incoming.url ?? "/", "http://fake.invalid");
    const req = {
      method: incoming.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: incoming.headers,
      body: Buffer.concat(chunks),
    };
    requests.push(req);
    await route(req, res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    workspaceId,
    apiKey,
    audiences,
    requests,
    violations,
    requestsTo: (method, part) => requests.filter((r) => r.method === method && r.path.includes(part)),
    async close() {
      if (!server.listening) return;
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/**
 * For a test file whose tests each start their own fake: after each test, the fake's answers are
 * checked for contract violations and it is closed.
 */
export function useFakeService(): (options?: FakeServiceOptions) => Promise<FakeService> {
  let started: FakeService[] = [];
  afterEach(async () => {
    const fakes = started;
    started = [];
    await Promise.all(fakes.map((fake) => fake.close()));
    for (const fake of fakes) expect(fake.violations).toEqual([]);
  });
  return async (options) => {
    const fake = await startFakeService(options);
    started.push(fake);
    return fake;
  };
}

/** The environment that points the CLI at a fake, with its key. */
export const cliEnv = (fake: FakeService) => ({ API_URL: fake.baseUrl, API_KEY: fake.apiKey });
