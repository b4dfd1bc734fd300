// The SDK for insight: what a rule change would do, why a member is in (against the saved rule or
// a draft), how audiences overlap, how an audience's size changed and who came and went, on a
// workspace built so every number is known. Every response is checked against the contract. (Every
// case and error: test/api/rule-insight.test.ts, explain-draft.test.ts, size-insight.test.ts and
// membership-history.test.ts.)
import { describe, expect } from "vitest";
import { notCalled, operationsTagged } from "../support/checked-client.ts";
import { it } from "../support/fixture.ts";

const TAGS = ["Insight"];
const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = `${AUDIENCES}/{audienceId}`;

describe("insight through the SDK", () => {
  it("previews a rule change, explains a member, overlaps audiences and reads the history", async ({
    api,
    workspaceId,
  }) => {
    const ws = { params: { path: { workspaceId } } };
    const create = async (name: string) => (await api.POST(AUDIENCES, { ...ws, body: { name } })).id;
    const [readers, acme] = [await create("Readers"), await create("Acme")];
    await api.POST("/v0/workspaces/{workspaceId}/members", {
      ...ws,
      body: {
        members: [
          { id: "ada", fields: { company: "Acme" } },
          { id: "bob", fields: { company: "Acme" } },
          { id: "cy", fields: { company: "Initech" } },
        ],
      },
    });
    await api.POST(`${AUDIENCE}/members`, {
      params: { path: { workspaceId, audienceId: readers } },
      body: { memberIds: ["ada", "cy"] },
    });
    const acmeRule = { field: "fields.company", op: "eq", value: "acme" } as const;
    const path = { workspaceId, audienceId: acme };
    // Before saving: two would enter, nobody leaves.
    const preview = await api.POST(`${AUDIENCE}/filter/preview`, { params: { path }, body: { filter: acmeRule } });
    expect(preview).toEqual({
      memberCount: 2,
      entering: { count: 2, sample: ["ada", "bob"] },
      leaving: { count: 0, sample: [] },
    });
    await api.PUT(`${AUDIENCE}/filter`, { params: { path }, body: { filter: acmeRule } });
    const why = await api.GET(`${AUDIENCE}/members/{memberId}/explanation`, {
      params: { path: { ...path, memberId: "bob" } },
    });
    expect(why).toEqual({
      isMember: true,
      reason: "rule",
      manual: null,
      rule: { matches: true, nodes: [{ pointer: "", matches: true, value: "Acme" }] },
    });
    // The same member against a rule not saved yet: it would not match, and nothing keeps it in by hand.
    const draft = await api.POST(`${AUDIENCE}/members/{memberId}/explanation`, {
      params: { path: { ...path, memberId: "bob" } },
      body: { filter: { field: "fields.company", op: "eq", value: "initech" } },
    });
    expect(draft).toEqual({
      isMember: false,
      reason: null,
      manual: null,
      rule: { matches: false, nodes: [{ pointer: "", matches: false, value: "Acme" }] },
    });
    const overlap = await api.POST(`${AUDIENCES}/overlap`, { ...ws, body: { audienceIds: [readers, acme] } });
    expect(overlap).toEqual({
      audiences: [
        { id: readers, memberCount: 2 },
        { id: acme, memberCount: 2 },
      ],
      pairs: [{ audienceIds: [readers, acme], count: 1 }],
      all: 1,
    });
    // By day: the writes above fall in one day, or in two when they straddle midnight (UTC).
    const history = await api.GET(`${AUDIENCE}/history`, { params: { path, query: { interval: "day" } } });
    const sum = (key: "entered" | "left") => history.results.reduce((total, row) => total + row[key], 0);
    expect([history.results.at(-1)?.memberCount, sum("entered"), sum("left")]).toEqual([2, 2, 0]);
    // Who came and went over the last day (the workspace's whole record): the rule's two.
    const changes = await api.GET(`${AUDIENCE}/changes`, { params: { path } });
    expect(changes.results.map(({ memberId, change, reason }) => ({ memberId, change, reason }))).toEqual([
      { memberId: "ada", change: "entered", reason: "rule" },
      { memberId: "bob", change: "entered", reason: "rule" },
    ]);
    expect([changes.counts, changes.moves]).toEqual([
      { entered: 2, left: 0 },
      { entered: 2, left: 0 },
    ]);
  });
});

describe("coverage", () => {
  it(`called every ${TAGS.join(", ")} operation through the SDK`, () => {
    const expected = operationsTagged(TAGS);
    expect(expected.length).toBe(6);
    expect(notCalled(expected)).toEqual([]);
  });
});
