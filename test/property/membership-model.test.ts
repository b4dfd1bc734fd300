import fc from "fast-check";
import { describe, expect } from "vitest";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { readFeed } from "../events/event-support.ts";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import type { LiveServer } from "../support/live-server.ts";
import { referenceMatches } from "../support/reference-filter.ts";

/**
 * Drives random sequences of member upserts, updates and deletes, filter changes, adds, removes,
 * merges, snapshots, archives and restores against a live server, and after every step compares each
 * audience's materialized members with a brute-force evaluation of
 *   member ∈ A ⇔ include(A, m) ∨ (filter(A) matches m ∧ ¬exclude(A, m))
 * over all members, by the reference evaluator of test/support/reference-filter.ts (and every
 * preview count with the same evaluation); at the end of a run, the event feed's entered/left,
 * replayed from empty audiences, must give the same members.
 */
const RUNS = 4;
const STEPS_PER_RUN = 60;

const MEMBER_IDS = ["m0", "m1", "m2", "M3", "m4", "ä5"];
const EMAILS = ["ada@example.com", "ADA@example.com", "bob@acme.io", "UNA@Acme.io", "carol@beta.org"];
const VALUES = ["Acme", "acme", "ÄRGER", "ärger", "beta", "Beta Labs", ""];

const condition: fc.Arbitrary<Filter> = fc.oneof(
  fc.record({
    field: fc.constantFrom("fields.company", "fields.role", "email", "anyEmail", "id"),
    op: fc.constantFrom("eq", "ne", "contains", "startsWith", "endsWith"),
    value: fc.constantFrom(...VALUES, "ACME", "@acme.io", "m", "ä"),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constantFrom("fields.company", "anyEmail", "id"),
    op: fc.constantFrom("in", "notIn"),
    value: fc.subarray(["acme", "BETA", "m1", "bob@acme.io", "ärger"], { minLength: 1 }),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constantFrom("fields.company", "fields.role", "email", "anyEmail"),
    op: fc.constantFrom("exists", "notExists"),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constant("createdAt"),
    op: fc.constantFrom("before", "after"),
    value: fc.constantFrom("2000-01-01T00:00:00.000Z", "2999-01-01T00:00:00.000Z"),
  }) as fc.Arbitrary<Filter>,
);
const filter: fc.Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    condition,
    fc.record({ all: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
    fc.record({ any: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
    fc.record({ not: tie("f") }) as fc.Arbitrary<Filter>,
  ),
})).f;

const memberInput = fc.record(
  {
    id: fc.constantFrom(...MEMBER_IDS),
    email: fc.constantFrom(...EMAILS),
    fields: fc.record({ company: fc.constantFrom(...VALUES), role: fc.constantFrom(...VALUES) }, { requiredKeys: [] }),
  },
  { requiredKeys: ["id"] },
);

const audience = fc.nat(3);
const step = fc.oneof(
  fc.record({ kind: fc.constant("upsert" as const), members: fc.array(memberInput, { minLength: 1, maxLength: 3 }) }),
  fc.record({
    kind: fc.constant("patch" as const),
    id: fc.constantFrom(...MEMBER_IDS),
    company: fc.option(fc.constantFrom(...VALUES)),
  }),
  fc.record({ kind: fc.constant("delete" as const), ids: fc.subarray(MEMBER_IDS, { minLength: 1, maxLength: 2 }) }),
  fc.record({ kind: fc.constant("filter" as const), audience, filter: fc.option(filter, { freq: 5 }) }),
  fc.record({
    kind: fc.constant("add" as const),
    audience,
    ids: fc.subarray(MEMBER_IDS, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant("remove" as const), audience, ids: fc.subarray(MEMBER_IDS, { minLength: 1 }) }),
  fc.record({ kind: fc.constant("merge" as const), a: audience, b: audience }),
  fc.record({ kind: fc.constant("snapshot" as const), audience }),
  fc.record({ kind: fc.constant("archive" as const), audience }),
  fc.record({ kind: fc.constant("restore" as const), audience }),
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

interface ModelAudience {
  id: string;
  filter: Filter | null;
  include: Set<string>;
  exclude: Set<string>;
  archived: boolean;
}
interface WireMember {
  id: string;
  createdAt: string;
  email: string | null;
  fields: Record<string, string>;
  alternativeEmails: string[];
}

type Api = TestWorkspace["api"];
const A = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

/** One run: a fresh workspace, four audiences, the steps, a check after each. */
async function run(server: LiveServer, steps: Step[]): Promise<void> {
  const ws = await createWorkspace(server);
  const audiences: ModelAudience[] = [];
  for (let i = 0; i < 4; i++) {
    const id = await createAudience(ws, `A${i}`);
    audiences.push({ id, filter: null, include: new Set(), exclude: new Set(), archived: false });
  }
  for (const [index, current] of steps.entries()) {
    const members = await allMembers(ws.api, ws.id);
    await apply(ws, audiences, current, members);
    await check(ws, audiences, `after step ${index}: ${JSON.stringify(current)}`);
  }
  await checkFeed(ws, audiences);
}

async function allMembers(api: Api, workspaceId: string): Promise<WireMember[]> {
  const page = await api.GET("/v0/workspaces/{workspaceId}/members", {
    params: { path: { workspaceId }, query: { limit: 500 } },
  });
  expect(page.pageInfo.hasNextPage).toBe(false);
  return page.results;
}

/** Brute force: the rule over every member, from the members' data as the API reports it. */
function expected(model: ModelAudience, members: WireMember[]): string[] {
  return members
    .filter((m) => model.include.has(m.id) || (!model.exclude.has(m.id) && referenceMatches(model.filter, m)))
    .map((m) => m.id)
    .sort();
}

async function apply(ws: TestWorkspace, audiences: ModelAudience[], s: Step, members: WireMember[]) {
  const { raw } = ws.api;
  const workspaceId = ws.id;
  const exists = new Set(members.map((m) => m.id));
  const writable = (a: ModelAudience) => (a.archived ? 409 : 200);
  const at = (a: ModelAudience) => ({ params: { path: { workspaceId, audienceId: a.id } } });
  switch (s.kind) {
    case "upsert": {
      const { response } = await raw.POST("/v0/workspaces/{workspaceId}/members", {
        params: { path: { workspaceId } },
        body: { members: s.members },
      });
      expect([200, 409]).toContain(response.status);
      return;
    }
    case "patch": {
      const { response } = await raw.PATCH("/v0/workspaces/{workspaceId}/members/{memberId}", {
        params: { path: { workspaceId, memberId: s.id } },
        body: { fields: { company: s.company } },
      });
      expect(response.status).toBe(exists.has(s.id) ? 200 : 404);
      return;
    }
    case "delete": {
      const { data } = await raw.DELETE("/v0/workspaces/{workspaceId}/members", {
        params: { path: { workspaceId } },
        body: { memberIds: s.ids },
      });
      expect(data?.deleted).toBe(s.ids.filter((id) => exists.has(id)).length);
      for (const a of audiences) for (const id of s.ids) a.include.delete(id) || a.exclude.delete(id);
      return;
    }
    case "filter": {
      const a = audiences[s.audience] as ModelAudience;
      const { data, response } = await raw.PUT(`${A}/filter`, { ...at(a), body: { filter: s.filter } });
      expect(response.status).toBe(writable(a));
      if (response.status !== 200) return;
      a.filter = s.filter;
      expect(data?.memberCount).toBe(expected(a, members).length);
      if (s.filter !== null) {
        // The SQL compilation (preview) against the in-process predicate, over every member.
        const preview = await ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
          params: { path: { workspaceId } },
          body: { filter: s.filter, limit: 30 },
        });
        const byPredicate = members.filter((m) => referenceMatches(s.filter, m));
        expect(preview.totalCount).toBe(byPredicate.length);
      }
      return;
    }
    case "add": {
      const a = audiences[s.audience] as ModelAudience;
      const { response } = await raw.POST(`${A}/members`, { ...at(a), body: { memberIds: s.ids } });
      expect(response.status).toBe(writable(a));
      if (response.status !== 200) return;
      for (const id of s.ids) {
        a.include.add(id);
        a.exclude.delete(id);
      }
      return;
    }
    case "remove": {
      const a = audiences[s.audience] as ModelAudience;
      const { response } = await raw.DELETE(`${A}/members`, { ...at(a), body: { memberIds: s.ids } });
      expect(response.status).toBe(writable(a));
      if (response.status !== 200) return;
      for (const id of s.ids.filter((id) => exists.has(id))) {
        a.exclude.add(id);
        a.include.delete(id);
      }
      return;
    }
    case "merge": {
      const [a, b] = [audiences[s.a] as ModelAudience, audiences[s.b] as ModelAudience];
      const { data, response } = await raw.POST("/v0/workspaces/{workspaceId}/audiences/merge", {
        params: { path: { workspaceId } },
        body: { name: `Merged ${audiences.length}`, audienceIds: [a.id, b.id] },
      });
      if (a === b) return void expect(response.status).toBe(400);
      if (a.archived || b.archived) return void expect(response.status).toBe(409);
      expect(response.status).toBe(201);
      const union = new Set([...expected(a, members), ...expected(b, members)]);
      const merged: ModelAudience = {
        id: data?.id as string,
        filter: a.filter && b.filter ? { any: [a.filter, b.filter] } : (a.filter ?? b.filter),
        include: new Set([...a.include, ...b.include]),
        exclude: new Set(),
        archived: false,
      };
      for (const m of members) {
        if (!union.has(m.id) && referenceMatches(merged.filter, m)) merged.exclude.add(m.id);
      }
      audiences.push(merged);
      return;
    }
    case "snapshot": {
      const a = audiences[s.audience] as ModelAudience;
      const { data, response } = await raw.POST(`${A}/snapshot`, {
        ...at(a),
        body: { name: `Snapshot ${audiences.length}` },
      });
      if (a.archived) return void expect(response.status).toBe(409);
      expect(response.status).toBe(201);
      const include = new Set(expected(a, members));
      audiences.push({ id: data?.id as string, filter: null, include, exclude: new Set(), archived: false });
      return;
    }
    case "archive":
    case "restore": {
      const a = audiences[s.audience] as ModelAudience;
      const { response } = s.kind === "archive" ? await raw.DELETE(A, at(a)) : await raw.POST(`${A}/restore`, at(a));
      expect(response.status).toBe(s.kind === "archive" ? 204 : 200);
      a.archived = s.kind === "archive";
      return;
    }
  }
}

async function check(ws: TestWorkspace, audiences: ModelAudience[], context: string): Promise<void> {
  const members = await allMembers(ws.api, ws.id);
  for (const a of audiences) {
    const page = await ws.api.GET(`${A}/members`, {
      params: { path: { workspaceId: ws.id, audienceId: a.id }, query: { limit: 500 } },
    });
    const actual = page.results.map((m) => m.id).sort();
    expect(actual, `${context}: members of ${a.id}`).toEqual(expected(a, members));
    expect(page.totalCount, `${context}: totalCount of ${a.id}`).toBe(actual.length);
  }
}

/**
 * The event feed tells the same story: replaying every audience.members_changed event of the run,
 * from empty audiences, gives each audience exactly its members.
 */
async function checkFeed(ws: TestWorkspace, audiences: ModelAudience[]): Promise<void> {
  // Written after every step, so once its event is published, theirs are.
  const marker = await createAudience(ws, "Marker");
  const published = async () =>
    (await readFeed(ws.api, ws.id)).some((e) => e.type === "audience.created" && e.data.audienceId === marker);
  await expect.poll(published, { timeout: 20_000, interval: 25 }).toBe(true);
  const replayed = new Map<string, Set<string>>();
  for (const event of await readFeed(ws.api, ws.id)) {
    if (event.type !== "audience.members_changed") continue;
    const copy = replayed.get(event.data.audienceId) ?? new Set<string>();
    for (const id of event.data.entered) copy.add(id);
    for (const id of event.data.left) copy.delete(id);
    replayed.set(event.data.audienceId, copy);
  }
  const members = await allMembers(ws.api, ws.id);
  for (const a of audiences) {
    expect([...(replayed.get(a.id) ?? [])].sort(), `the feed's members of ${a.id}`).toEqual(expected(a, members));
  }
}

describe("materialized membership", () => {
  it(`matches the membership rule after every one of ${RUNS * STEPS_PER_RUN} random steps, and so does the feed`, async ({
    server,
  }) => {
    const steps = fc.array(step, { minLength: STEPS_PER_RUN, maxLength: STEPS_PER_RUN });
    await fc.assert(
      fc.asyncProperty(steps, (s) => run(server, s)),
      { numRuns: RUNS, endOnFailure: true },
    );
  }, 600_000);
});
