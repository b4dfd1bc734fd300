import fc from "fast-check";
import { describe, expect } from "vitest";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { readFeed } from "../events/event-support.ts";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import type { LiveServer } from "../support/live-server.ts";
import { type PlainMember, type ReferenceContext, referenceMatches } from "../support/reference-filter.ts";

/**
 * Drives random sequences of member upserts, updates and deletes, filter changes, adds, removes,
 * merges, snapshots, archives and restores against a live server, and after every step compares each
 * audience's materialized members with a brute-force evaluation of
 *   member ∈ A ⇔ include(A, m) ∨ (filter(A) matches m ∧ ¬exclude(A, m))
 * over all members, by the reference evaluator of test/support/reference-filter.ts (and every
 * preview count with the same evaluation); at the end of a run, the event feed's entered/left,
 * replayed from empty audiences, must give the same members. The workspace declares `score` a
 * number and `lastOrder` a date; rules compare them, and name other audiences (audience i only
 * audiences before it, so rules never form cycles), whose members the evaluation reads from its
 * own evaluation of them.
 */
const RUNS = 4;
const STEPS_PER_RUN = 60;

const MEMBER_IDS = ["m0", "m1", "m2", "M3", "m4", "ä5"];
const EMAILS = ["ada@example.com", "ADA@example.com", "bob@acme.io", "UNA@Acme.io", "carol@beta.org"];
const VALUES = ["Acme", "acme", "ÄRGER", "ärger", "beta", "Beta Labs", ""];
const TYPES = { score: "number", lastOrder: "date" } as const;
// Valid forms only (a write with another is refused); "" is no value.
const SCORES = ["9", "10", "1e1", "10.0", "-3.5", "0", ""];
const DATES = [
  "2026-01-31",
  "2026-01-31T00:00:00Z",
  "2026-01-31t09:00:00+01:00",
  "2026-05-15T12:00:00Z",
  "2027-02-28",
  "",
];
const BASE_AUDIENCES = 4;

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
  fc.record({
    field: fc.constant("fields.score"),
    op: fc.constantFrom("eq", "ne", "gt", "gte", "lt", "lte"),
    value: fc.constantFrom("9", "10", "1e1", "-3.5", "0"),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constant("fields.score"),
    op: fc.constantFrom("in", "notIn"),
    value: fc.subarray(["10", "0", "-3.5e0"], { minLength: 1 }),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constant("fields.lastOrder"),
    op: fc.constantFrom("before", "after"),
    value: fc.constantFrom("2026-01-31", "2026-01-31T09:00:00Z", "2026-05-15T12:00:00+00:00"),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constantFrom("fields.score", "fields.lastOrder"),
    op: fc.constantFrom("exists", "notExists"),
  }) as fc.Arbitrary<Filter>,
  fc.constantFrom<Filter>(
    { field: "fields.score", op: "between", value: ["-3.5", "1e1"] },
    { field: "fields.score", op: "between", value: ["10", "10"] },
    { field: "fields.lastOrder", op: "between", value: ["2026-01-31", "2026-05-15T12:00:00Z"] },
    { field: "fields.lastOrder", op: "between", value: ["2026-01-31T08:00:00Z", "2027-02-28"] },
  ),
);
/** `@i` stands for the id of audience i until the step runs (ids are made by the server). */
const audienceCondition = (before: number): fc.Arbitrary<Filter> =>
  fc.record({
    field: fc.constant("audience"),
    op: fc.constantFrom("in", "notIn"),
    value: fc.integer({ min: 0, max: before - 1 }).map((i) => `@${i}`),
  }) as fc.Arbitrary<Filter>;

/** A rule for audience i: its audience conditions name only audiences before it. */
const filterFor = (i: number): fc.Arbitrary<Filter> => {
  const leaf = i === 0 ? condition : fc.oneof(condition, audienceCondition(i), audienceCondition(i));
  return fc.letrec<{ f: Filter }>((tie) => ({
    f: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.record({ all: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
      fc.record({ any: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
      fc.record({ not: tie("f") }) as fc.Arbitrary<Filter>,
    ),
  })).f;
};

const memberInput = fc.record(
  {
    id: fc.constantFrom(...MEMBER_IDS),
    email: fc.constantFrom(...EMAILS),
    fields: fc.record(
      {
        company: fc.constantFrom(...VALUES),
        role: fc.constantFrom(...VALUES),
        score: fc.constantFrom(...SCORES),
        lastOrder: fc.constantFrom(...DATES),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ["id"] },
);

const audience = fc.nat(BASE_AUDIENCES - 1);
const step = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("upsert" as const),
      members: fc.array(memberInput, { minLength: 1, maxLength: 3 }),
    }),
    weight: 2,
  },
  fc.record({
    kind: fc.constant("patch" as const),
    id: fc.constantFrom(...MEMBER_IDS),
    company: fc.option(fc.constantFrom(...VALUES)),
    score: fc.option(fc.constantFrom(...SCORES)),
  }),
  fc.record({ kind: fc.constant("delete" as const), ids: fc.subarray(MEMBER_IDS, { minLength: 1, maxLength: 2 }) }),
  {
    // Rules on later audiences name earlier ones: the more rules, the more dependencies.
    arbitrary: audience.chain((i) =>
      fc.record({
        kind: fc.constant("filter" as const),
        audience: fc.constant(i),
        filter: fc.option(filterFor(i), { freq: 5 }),
      }),
    ),
    weight: 3,
  },
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
  /** Whether its rule ever named another audience. */
  namedOthers?: boolean;
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
  for (const [key, type] of Object.entries(TYPES)) {
    await ws.api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
      params: { path: { workspaceId: ws.id, fieldKey: key } },
      body: { type },
    });
  }
  for (let i = 0; i < BASE_AUDIENCES; i++) {
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

/**
 * Brute force: every audience's rule over every member, from the members' data as the API reports
 * it; an audience condition reads the members of the audience it names, evaluated the same way
 * (first: rules never form cycles).
 */
function evaluate(audiences: ModelAudience[], members: WireMember[]) {
  const done = new Map<string, Set<string>>();
  const busy = new Set<string>();
  const context: ReferenceContext = {
    types: TYPES,
    inAudience: (id: string, m: PlainMember) =>
      membersOf(audiences.find((a) => a.id === id) as ModelAudience).has(m.id),
  };
  function membersOf(model: ModelAudience): Set<string> {
    const known = done.get(model.id);
    if (known) return known;
    if (busy.has(model.id)) throw new Error(`the model's rules form a cycle through ${model.id}`);
    busy.add(model.id);
    const ids = members
      .filter(
        (m) => model.include.has(m.id) || (!model.exclude.has(m.id) && referenceMatches(model.filter, m, context)),
      )
      .map((m) => m.id);
    done.set(model.id, new Set(ids));
    return done.get(model.id) as Set<string>;
  }
  return { context, of: (model: ModelAudience) => [...membersOf(model)].sort() };
}

/** The filter with each `@i` replaced by audience i's id. */
function resolve(filter: Filter, audiences: ModelAudience[]): Filter {
  if ("all" in filter) return { all: filter.all.map((f) => resolve(f, audiences)) };
  if ("any" in filter) return { any: filter.any.map((f) => resolve(f, audiences)) };
  if ("not" in filter) return { not: resolve(filter.not, audiences) };
  if (filter.field !== "audience") return filter;
  return { ...filter, value: (audiences[Number((filter.value as string).slice(1))] as ModelAudience).id };
}

/** The audiences a filter's audience conditions name. */
function named(filter: Filter | null): string[] {
  if (filter === null) return [];
  if ("all" in filter) return filter.all.flatMap(named);
  if ("any" in filter) return filter.any.flatMap(named);
  if ("not" in filter) return named(filter.not);
  return filter.field === "audience" ? [filter.value as string] : [];
}

/** A merged rule is `any` of both rules, an `any` flattened: past 10 levels or 100 conditions, refused. */
function mergedTooBig(a: Filter | null, b: Filter | null): boolean {
  if (a === null || b === null) return false;
  const depth = (f: Filter): number =>
    "all" in f
      ? 1 + Math.max(...f.all.map(depth))
      : "any" in f
        ? 1 + Math.max(...f.any.map(depth))
        : "not" in f
          ? 1 + depth(f.not)
          : 1;
  const conditions = (f: Filter): number =>
    "all" in f
      ? sum(f.all.map(conditions))
      : "any" in f
        ? sum(f.any.map(conditions))
        : "not" in f
          ? conditions(f.not)
          : 1;
  const parts = [a, b].flatMap((f) => ("any" in f ? f.any : [f]));
  return 1 + Math.max(...parts.map(depth)) > 10 || sum(parts.map(conditions)) > 100;
}
const sum = (figures: number[]) => figures.reduce((x, y) => x + y, 0);

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
        body: { fields: { company: s.company, score: s.score } },
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
      const filter = s.filter === null ? null : resolve(s.filter, audiences);
      const { data, response } = await raw.PUT(`${A}/filter`, { ...at(a), body: { filter } });
      // A rule may not name an archived audience (audience_archived).
      const namesArchived = named(filter).some((id) => audiences.find((n) => n.id === id)?.archived);
      expect(response.status).toBe(namesArchived ? 409 : writable(a));
      if (response.status !== 200) return;
      a.filter = filter;
      a.namedOthers ||= named(filter).length > 0;
      const model = evaluate(audiences, members);
      expect(data?.memberCount).toBe(model.of(a).length);
      if (filter !== null) {
        // The SQL compilation (preview) against the in-process predicate, over every member.
        const preview = await ws.api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
          params: { path: { workspaceId } },
          body: { filter, limit: 30 },
        });
        const byPredicate = members.filter((m) => referenceMatches(filter, m, model.context));
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
      if (mergedTooBig(a.filter, b.filter)) return void expect(response.status).toBe(400);
      expect(response.status).toBe(201);
      const model = evaluate(audiences, members);
      const union = new Set([...model.of(a), ...model.of(b)]);
      const merged: ModelAudience = {
        id: data?.id as string,
        filter: a.filter && b.filter ? { any: [a.filter, b.filter] } : (a.filter ?? b.filter),
        include: new Set([...a.include, ...b.include]),
        exclude: new Set(),
        archived: false,
      };
      merged.namedOthers = named(merged.filter).length > 0;
      for (const m of members) {
        if (!union.has(m.id) && referenceMatches(merged.filter, m, model.context)) merged.exclude.add(m.id);
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
      const include = new Set(evaluate(audiences, members).of(a));
      audiences.push({ id: data?.id as string, filter: null, include, exclude: new Set(), archived: false });
      return;
    }
    case "archive":
    case "restore": {
      const a = audiences[s.audience] as ModelAudience;
      const { response } = s.kind === "archive" ? await raw.DELETE(A, at(a)) : await raw.POST(`${A}/restore`, at(a));
      // An audience that an unarchived audience's rule names stays (audience_in_use); one whose rule
      // names an archived audience stays archived (audience_archived).
      const inUse = !a.archived && audiences.some((u) => !u.archived && named(u.filter).includes(a.id));
      const namesArchived = a.archived && named(a.filter).some((id) => audiences.find((u) => u.id === id)?.archived);
      const refused = s.kind === "restore" ? namesArchived : inUse;
      expect(response.status).toBe(refused ? 409 : s.kind === "restore" ? 200 : 204);
      if (response.status !== 409) a.archived = s.kind === "archive";
      return;
    }
  }
}

async function check(ws: TestWorkspace, audiences: ModelAudience[], context: string): Promise<void> {
  const members = await allMembers(ws.api, ws.id);
  const model = evaluate(audiences, members);
  for (const a of audiences) {
    const page = await ws.api.GET(`${A}/members`, {
      params: { path: { workspaceId: ws.id, audienceId: a.id }, query: { limit: 500 } },
    });
    const actual = page.results.map((m) => m.id).sort();
    expect(actual, `${context}: members of ${a.id}`).toEqual(model.of(a));
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
  // Only an audience whose rule named another at some point follows one (reason dependency).
  const followers = new Set(audiences.filter((a) => a.namedOthers).map((a) => a.id));
  for (const event of await readFeed(ws.api, ws.id)) {
    if (event.type !== "audience.members_changed") continue;
    if (event.data.reason === "dependency")
      expect(followers, "a dependency's audience").toContain(event.data.audienceId);
    const copy = replayed.get(event.data.audienceId) ?? new Set<string>();
    for (const id of event.data.entered) copy.add(id);
    for (const id of event.data.left) copy.delete(id);
    replayed.set(event.data.audienceId, copy);
  }
  const model = evaluate(audiences, await allMembers(ws.api, ws.id));
  for (const a of audiences) {
    expect([...(replayed.get(a.id) ?? [])].sort(), `the feed's members of ${a.id}`).toEqual(model.of(a));
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
