import fc from "fast-check";
import { describe, expect } from "vitest";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { readFeed } from "../events/event-support.ts";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import type { LiveServer } from "../support/live-server.ts";
import { type PlainMember, type ReferenceContext, referenceMatches } from "../support/reference-filter.ts";
import { BASE_AUDIENCES, MOVED_TWICE, type Step, step, TYPES } from "./membership-steps.ts";

/**
 * Drives random sequences of member upserts, updates and deletes, filter changes, adds, removes,
 * merges, snapshots, archives and restores against a live server, and after every step compares each
 * audience's materialized members with a brute-force evaluation of
 *   member ∈ A ⇔ include(A, m) ∨ (filter(A) matches m ∧ ¬exclude(A, m))
 * over all members, by the reference evaluator of test/support/reference-filter.ts (and every
 * preview count with the same evaluation); at the end of a run, the event feed's entered/left,
 * replayed from empty audiences, must give the same members, and each step's events exactly the
 * members that step moved (membership-steps.ts makes the steps). The workspace declares `score` a
 * number and `lastOrder` a date; rules compare them, and name other audiences (audience i only
 * audiences before it, so rules never form cycles), whose members the evaluation reads from its
 * own evaluation of them.
 */
const RUNS = 4;
const STEPS_PER_RUN = 60;

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
  // Renamed after every step, so the feed's audience.renamed events mark where each step's end.
  const marker = await createAudience(ws, "Step");
  const states: Membership[] = [];
  for (const [index, current] of steps.entries()) {
    const members = await allMembers(ws.api, ws.id);
    await apply(ws, audiences, current, members);
    states.push(await check(ws, audiences, `after step ${index}: ${JSON.stringify(current)}`));
    await ws.api.PATCH(A, {
      params: { path: { workspaceId: ws.id, audienceId: marker } },
      body: { name: `Step ${index}` },
    });
  }
  await checkFeed(ws, audiences, { marker, states, steps });
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
  if ("activity" in filter || filter.field !== "audience") return filter;
  return { ...filter, value: (audiences[Number((filter.value as string).slice(1))] as ModelAudience).id };
}

/** The audiences a filter's audience conditions name. */
function named(filter: Filter | null): string[] {
  if (filter === null) return [];
  if ("all" in filter) return filter.all.flatMap(named);
  if ("any" in filter) return filter.any.flatMap(named);
  if ("not" in filter) return named(filter.not);
  return !("activity" in filter) && filter.field === "audience" ? [filter.value as string] : [];
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
      const body = s.fields ? { members: s.ids.map((id) => ({ id, fields: s.fields ?? {} })) } : { memberIds: s.ids };
      const { response } = await raw.POST(`${A}/members`, { ...at(a), body });
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

/** Each audience's members, by the model, after a step. */
type Membership = Map<string, string[]>;

async function check(ws: TestWorkspace, audiences: ModelAudience[], context: string): Promise<Membership> {
  const members = await allMembers(ws.api, ws.id);
  const model = evaluate(audiences, members);
  const state: Membership = new Map();
  for (const a of audiences) {
    state.set(a.id, model.of(a));
    const page = await ws.api.GET(`${A}/members`, {
      params: { path: { workspaceId: ws.id, audienceId: a.id }, query: { limit: 500 } },
    });
    const actual = page.results.map((m) => m.id).sort();
    expect(actual, `${context}: members of ${a.id}`).toEqual(model.of(a));
    expect(page.totalCount, `${context}: totalCount of ${a.id}`).toBe(actual.length);
  }
  return state;
}

/**
 * The event feed tells the same story: replaying every audience.members_changed event of the run,
 * from empty audiences, gives each audience exactly its members; and the events of each step, per
 * audience, are exactly the model's difference between before and after it (one request publishes
 * only its net change: no member both entered and left, none twice).
 */
async function checkFeed(
  ws: TestWorkspace,
  audiences: ModelAudience[],
  run: { marker: string; states: Membership[]; steps: Step[] },
): Promise<void> {
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
  checkStepEvents(await readFeed(ws.api, ws.id), run);
}

function checkStepEvents(
  events: Awaited<ReturnType<typeof readFeed>>,
  run: { marker: string; states: Membership[]; steps: Step[] },
) {
  let step = 0;
  let moved = new Map<string, { entered: string[]; left: string[] }>();
  const endOfStep = () => {
    const before = run.states[step - 1] ?? new Map<string, string[]>();
    const after = run.states[step] as Membership;
    const context = `the events of step ${step}: ${JSON.stringify(run.steps[step])}`;
    for (const [id, members] of after) {
      const was = new Set(before.get(id) ?? []);
      const now = new Set(members);
      const { entered = [], left = [] } = moved.get(id) ?? {};
      expect(entered.sort(), `${context}: entered ${id}`).toEqual(members.filter((m) => !was.has(m)));
      expect(left.sort(), `${context}: left ${id}`).toEqual([...was].filter((m) => !now.has(m)).sort());
    }
    moved = new Map();
    step++;
  };
  for (const event of events) {
    if (event.type === "audience.renamed" && event.data.audienceId === run.marker) endOfStep();
    if (event.type !== "audience.members_changed" || step >= run.states.length) continue;
    const audience = moved.get(event.data.audienceId) ?? { entered: [], left: [] };
    audience.entered.push(...event.data.entered);
    audience.left.push(...event.data.left);
    moved.set(event.data.audienceId, audience);
  }
  expect(step, "a marker for every step").toBe(run.states.length);
}

describe("materialized membership", () => {
  it(`matches the membership rule after every one of ${RUNS * STEPS_PER_RUN} random steps, and so does the feed`, async ({
    server,
  }) => {
    const steps = fc.array(step, { minLength: STEPS_PER_RUN, maxLength: STEPS_PER_RUN });
    await fc.assert(
      fc.asyncProperty(steps, (s) => run(server, s)),
      { numRuns: RUNS, endOnFailure: true, examples: [[MOVED_TWICE]] },
    );
  }, 600_000);
});
