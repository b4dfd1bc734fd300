import { writeFileSync } from "node:fs";
import type { components } from "@audience-service/client";
import fc from "fast-check";
import { describe, expect } from "vitest";
import { checkedClient } from "../support/checked-client.ts";
import {
  addMembers,
  createAudience,
  createWorkspace,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
// Its snapshots read the whole store: a server of its own, which no other file writes to.
import { testOnOwnServer as test } from "../support/fixture.ts";
import { ADMIN_TOKEN, call, type LiveServer } from "../support/live-server.ts";
import { at, documentedCodes, type OperationShape, operationShapes, validatorAt } from "./contract-shapes.ts";
import { type DbState, diffDb, snapshotDb } from "./db-state.ts";
import { type HostileRequest, hostileRequests, type Seed, sweepRequests } from "./hostile-requests.ts";
import { SWEEP_VALUES } from "./hostile-values.ts";

/**
 * Hostile input, generated from the contract: for every operation, requests made invalid in one
 * place (a body node that breaks its schema, malformed JSON, a wrong media type, an odd path
 * segment, a bad query value or header), sent with valid credentials so they reach validation.
 * These are requests the typed SDK cannot send, so they go through call() with generated URLs.
 * Every answer must be documented (call() checks it against the contract), a rejection must be a
 * 4xx problem document with a code documented for that status, nothing may answer 5xx, and a
 * rejected request must leave every table of the store exactly as it was.
 */
const SEED = Number(process.env.HOSTILE_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS_WITH_BODY = 64;
const RUNS_WITHOUT_BODY = 40;
const RUNS_WITHOUT_INPUT = 5;
const MIN_REJECTED = 1_000;

const FILTER: components["schemas"]["Filter"] = {
  all: [
    { field: "fields.company", op: "eq", value: "Acme" },
    {
      any: [
        { field: "anyEmail", op: "endsWith", value: "@example.com" },
        { field: "id", op: "in", value: ["m1", "m2"] },
      ],
    },
    { not: { field: "createdAt", op: "before", value: "2000-01-01T00:00:00.000Z" } },
    { field: "email", op: "exists" },
  ],
};

interface Finding {
  operationId: string;
  kind: string;
  what: string;
  request: string;
  answer: string;
}

const shapes = operationShapes();
const stats = { generated: 0, rejected: 0, accepted: 0, schemaInvalid: 0, fiveXx: 0 };
const perOperation = new Map<string, { rejected: number; accepted: number }>();
/** Refused requests per kind of hostility (body.tooLong, path.memberId, query.limit, …). */
const perKind = new Map<string, number>();
const findings: Finding[] = [];

/** The workspace every hostile request targets, set up once for the file. */
interface Target {
  server: LiveServer;
  ws: TestWorkspace;
  /** A valid request per operation, which the generators make invalid in one place. */
  seeds: Record<string, Seed>;
  /** The store as the last request left it. */
  baseline: DbState;
}

const it = test.extend("target", { scope: "file" }, async ({ server }): Promise<Target> => {
  const ws = await createWorkspace(server);
  const workspaceId = ws.id;
  const a1 = await createAudience(ws, "Hostile A");
  const a2 = await createAudience(ws, "Hostile B");
  const archiveTarget = await createAudience(ws, "Hostile archive target");
  const archived = await createAudience(ws, "Hostile archived");
  await upsertMembers(ws, [
    { id: "m1", email: "m1@example.com", fields: { firstName: "Ada", company: "Acme" } },
    { id: "m2", email: "m2@example.com", alternativeEmails: ["m2b@example.com"], fields: { company: "Acme" } },
    { id: "victim", email: "victim@example.com" },
  ]);
  await addMembers(ws, a1, { memberIds: ["m1", "m2"] });
  await addMembers(ws, archived, { memberIds: ["m1"] });
  const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
  await ws.api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: archived } } });
  await ws.api.PUT(`${AUDIENCE}/filter`, {
    params: { path: { workspaceId, audienceId: a2 } },
    body: { filter: FILTER },
  });
  const page = await ws.api.GET(`${AUDIENCE}/members`, {
    params: { path: { workspaceId, audienceId: a1 }, query: { limit: 1 } },
  });
  const admin = checkedClient(server.baseUrl, ADMIN_TOKEN);
  const spareKey = await admin.POST("/v0/workspaces/{workspaceId}/api-keys", { params: { path: { workspaceId } } });
  const w = { workspaceId };
  const seeds: Record<string, Seed> = {
    createWorkspace: { path: {}, body: { name: "Hostile workspace" } },
    createApiKey: { path: w, body: { name: "hostile" } },
    revokeApiKey: { path: { ...w, keyId: spareKey.id } },
    createAudience: { path: w, body: { name: "Seed audience" } },
    listAudiences: { path: w, query: { includeArchived: "true", search: "Hostile", sortDirection: "ASC" } },
    mergeAudiences: { path: w, body: { name: "Merged seed", audienceIds: [a1, a2] } },
    getAudience: { path: { ...w, audienceId: a1 } },
    updateAudience: { path: { ...w, audienceId: a1 }, body: { name: "Hostile A" } },
    archiveAudience: { path: { ...w, audienceId: archiveTarget } },
    restoreAudience: { path: { ...w, audienceId: archived } },
    addAudienceMembers: {
      path: { ...w, audienceId: a1 },
      body: {
        memberIds: ["m1", "m2"],
        members: [
          {
            id: "m3",
            email: "m3@example.com",
            fields: { firstName: "Ann", company: "Acme" },
            alternativeEmails: ["m3b@example.com"],
          },
        ],
      },
    },
    removeAudienceMembers: { path: { ...w, audienceId: a1 }, body: { memberIds: ["m2"] } },
    listAudienceMembers: {
      path: { ...w, audienceId: a1 },
      query: { limit: "2", sortDirection: "DESC", search: "example", after: page.pageInfo.endCursor },
    },
    previewAudience: { path: w, body: { filter: FILTER, limit: 10 } },
    getAudienceFilter: { path: { ...w, audienceId: a2 } },
    setAudienceFilter: { path: { ...w, audienceId: a2 }, body: { filter: FILTER } },
    upsertMembers: {
      path: w,
      body: {
        members: [
          { id: "m4", email: "m4@example.com", fields: { role: "Eng" }, alternativeEmails: ["m4b@example.com"] },
          { email: "m5@example.com" },
        ],
      },
    },
    listMembers: {
      path: w,
      query: { audienceId: a1, limit: "2", sortDirection: "ASC", before: page.pageInfo.startCursor },
    },
    deleteMembers: { path: w, body: { memberIds: ["victim", "nobody"] } },
    getMember: { path: { ...w, memberId: "m1" } },
    updateMember: {
      path: { ...w, memberId: "m1" },
      body: { email: "m1@example.com", fields: { firstName: "Ada", nickname: null }, alternativeEmails: ["m1b@x.org"] },
    },
    listMemberAudiences: { path: { ...w, memberId: "m1" } },
  };
  return { server, ws, seeds, baseline: await snapshotDb(server.store) };
});

/** A valid request for an operation this file has no seed for: the contract's example and known ids. */
function seedFor({ ws, seeds }: Target, shape: OperationShape): Seed {
  const known = seeds[shape.operationId];
  if (known) return known;
  const ids: Record<string, string> = { workspaceId: ws.id, audienceId: seeds.getAudience?.path.audienceId ?? "" };
  const path = Object.fromEntries(
    shape.params.filter((p) => p.in === "path").map((p) => [p.name, ids[p.name] ?? "m1"]),
  );
  const examples = shape.body ? at(shape.body.pointer.replace(/\/schema$/, "/examples")) : undefined;
  const example = examples ? (Object.values(examples)[0] as { value?: unknown }).value : undefined;
  return { path, ...(example === undefined ? {} : { body: example }) };
}

function credentials({ ws }: Target, shape: OperationShape): Record<string, string> {
  if (shape.security === "none") return {};
  return { authorization: `Bearer ${shape.security === "adminToken" ? ADMIN_TOKEN : ws.key}` };
}

const clip = (text: string, n = 300) => (text.length > n ? `${text.slice(0, n)}… (${text.length} chars)` : text);

function record(request: HostileRequest, url: string, what: string, answer: string) {
  const body = request.rawBody === undefined ? "" : ` ${JSON.stringify(clip(request.rawBody, 200))}`;
  const type = request.headers["content-type"] ? ` [${request.headers["content-type"]}]` : "";
  findings.push({
    operationId: request.operationId,
    kind: request.kind,
    what,
    request: `${request.method} ${clip(url, 200)}${type}${body}`,
    answer: clip(answer),
  });
}

/** Sends one hostile request and checks its answer and the store; never throws, it records. */
async function send(target: Target, request: HostileRequest): Promise<void> {
  const { server } = target;
  stats.generated++;
  if (request.schemaValid === false) stats.schemaInvalid++;
  const address = new URL(server.baseUrl + request.url);
  const url = address.pathname + address.search;
  const counts = perOperation.get(request.operationId) ?? { rejected: 0, accepted: 0 };
  perOperation.set(request.operationId, counts);
  let status: number;
  try {
    const response = await call(server, request.method, url, {
      headers: request.headers,
      ...(request.rawBody === undefined ? {} : { rawBody: request.rawBody }),
    });
    status = response.status;
    if (status >= 500) {
      stats.fiveXx++;
      record(request, url, `${status} ${response.problem?.code}`, response.text);
    } else if (status >= 400) {
      const codes = documentedCodes(request.method, url, status);
      const code = response.problem?.code ?? "(none)";
      if (codes.length > 0 && !codes.includes(code)) {
        record(request, url, `${status} ${code} is not a code documented for ${status}`, response.text);
      }
    } else if (status >= 300) {
      record(request, url, `unexpected status ${status}`, response.text);
    }
  } catch (error) {
    // call() threw: the answer breaks the contract (undocumented status, not a problem document, …).
    const message = (error as Error).message;
    status = Number(/-> (\d{3})/.exec(message)?.[1] ?? 0);
    if (status >= 500) stats.fiveXx++;
    record(request, url, `contract violation (${status})`, message);
  }
  const after = await snapshotDb(server.store);
  if (status >= 200 && status < 300) {
    counts.accepted++;
    stats.accepted++;
  } else {
    counts.rejected++;
    if (status >= 400 && status < 500) stats.rejected++;
    const family = (request.kind.split(" ")[0] ?? "").replace(/^(sweep\.(body|query|path)).*/, "$1");
    perKind.set(family, (perKind.get(family) ?? 0) + 1);
    const changed = diffDb(target.baseline, after);
    if (changed.length > 0) record(request, url, `refused with ${status} but wrote: ${changed.join("; ")}`, "");
  }
  target.baseline = after;
}

describe("hostile input generated from the contract", () => {
  it("starts from seed bodies that the contract accepts, so each mutation is what makes a request bad", ({
    target,
  }) => {
    for (const shape of shapes) {
      const seed = seedFor(target, shape);
      if (shape.body && seed.body !== undefined) {
        expect(validatorAt(shape.body.pointer)(seed.body), shape.operationId).toBe(true);
      }
    }
  });

  it.for(shapes.map((shape, index) => [shape.operationId, shape, index] as const))(
    "%s: every hostile request gets a documented 4xx problem, no 5xx, and changes nothing",
    async ([operationId, shape, index], { target }) => {
      const hasInput = shape.body !== undefined || shape.params.length > 0;
      const numRuns = shape.body ? RUNS_WITH_BODY : hasInput ? RUNS_WITHOUT_BODY : RUNS_WITHOUT_INPUT;
      const [seed, auth] = [seedFor(target, shape), credentials(target, shape)];
      await fc.assert(
        fc.asyncProperty(hostileRequests(shape, seed, auth), (request) => send(target, request)),
        { numRuns, seed: SEED + index },
      );
      for (const request of sweepRequests(shape, seed, auth, SWEEP_VALUES)) await send(target, request);
      const mine = findings.filter((f) => f.operationId === operationId);
      expect(mine.map((f) => `${f.kind}: ${f.what}\n    ${f.request}\n    -> ${f.answer}`)).toEqual([]);
    },
  );

  it("tried at least 1,000 bad inputs, saw no 5xx, and every rejection left the store unchanged", ({ server }) => {
    const distinct = new Map<string, Finding & { count: number }>();
    for (const f of findings) {
      const key = `${f.operationId} ${f.kind.split(" ")[0]} ${f.what.slice(0, 60)}`;
      const seen = distinct.get(key);
      if (seen) seen.count++;
      else distinct.set(key, { ...f, count: 1 });
    }
    const table = [...perOperation].map(
      ([op, c]) => `  ${op.padEnd(24)} refused ${c.rejected}, accepted ${c.accepted}`,
    );
    console.log(
      [
        `Hostile input (seed ${SEED}, ${server.store.kind} store):`,
        `  requests generated: ${stats.generated}`,
        `  bad inputs tried (not accepted): ${stats.generated - stats.accepted}, of which 4xx: ${stats.rejected}`,
        `  accepted as valid after all (2xx, not counted): ${stats.accepted}`,
        `  bodies invalid against the contract schema: ${stats.schemaInvalid}`,
        `  5xx seen: ${stats.fiveXx}`,
        `  findings: ${findings.length} (${distinct.size} distinct)`,
        `  refused by kind: ${[...perKind]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, n]) => `${k} ${n}`)
          .join(", ")}`,
        ...table,
        ...[...distinct.values()].map(
          (f) => `  ! ${f.operationId} ${f.kind} (x${f.count}): ${f.what}\n      ${f.request}\n      -> ${f.answer}`,
        ),
      ].join("\n"),
    );
    if (process.env.HOSTILE_REPORT) writeFileSync(process.env.HOSTILE_REPORT, JSON.stringify(findings, null, 2));
    expect(stats.rejected).toBeGreaterThanOrEqual(MIN_REJECTED);
    expect(stats.fiveXx).toBe(0);
    expect(findings).toEqual([]);
  });
});
