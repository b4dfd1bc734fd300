// The rule insight service on fakes: what it refuses before reading any member, and how it turns
// a member's bits into an explanation.
import { describe, expect, it } from "vitest";
import type { AppError } from "../../src/domain/errors.ts";
import { createRuleInsight } from "../../src/features/insight/rule-insight.ts";
import type { AudienceRow } from "../../src/features/membership/audience-repo.ts";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import type { ExplainedMemberRow } from "../../src/features/membership/rules/rule-insight-repo.ts";
import { fakeStore } from "./fakes/fake-stores.ts";

const audience = (filter: Filter | null, isArchived = false): AudienceRow => ({
  id: "aud_a",
  name: "A",
  filter,
  isArchived,
  memberCount: 0,
  createdAt: new Date("2026-11-21T09:40:00Z"),
});
const member = (bits: Partial<ExplainedMemberRow>): ExplainedMemberRow => ({
  id: "m1",
  seq: 1,
  createdAt: new Date("2026-11-21T09:41:00Z"),
  email: null,
  alternativeEmails: [],
  fields: { score: "72" },
  isMember: false,
  included: false,
  excluded: false,
  inAudiences: [],
  ...bits,
});

function setUp(row: AudienceRow | null, explained?: ExplainedMemberRow) {
  const log: string[] = [];
  const service = createRuleInsight({
    store: fakeStore,
    audiences: { find: async () => row },
    fieldTypes: { types: async () => new Map([["score", "number" as const]]), unheld: async () => [] },
    checkCost: async () => {},
    activities: { tallies: async () => new Map() },
    insight: {
      filterChange: async () => {
        log.push("filterChange");
        return {
          memberCount: 1,
          entering: 1,
          leaving: 0,
          enteringSample: ["m1"],
          leavingSample: [],
          enteringEmails: [null],
          leavingEmails: [],
        };
      },
      explained: async () => {
        log.push("explained");
        return row
          ? { filter: row.filter, types: new Map([["score", "number" as const]]), member: explained }
          : undefined;
      },
    },
    checkRule: async (_ws, id, filter) => {
      log.push(`checkRule ${id} ${JSON.stringify(filter)}`);
    },
  });
  return { service, log };
}
const failure = async (promise: Promise<unknown>) =>
  (await promise.then(
    () => undefined,
    (e: AppError) => e,
  )) as AppError;
const scoreAbove60: Filter = { field: "fields.score", op: "gt", value: "60" };

describe("previewChange", () => {
  it("refuses an unknown or archived audience and a bad filter before evaluating anything", async () => {
    for (const [row, raw, code] of [
      [null, scoreAbove60, "audience_not_found"],
      [audience(null, true), scoreAbove60, "audience_archived"],
      [audience(null), { field: "fields.score", op: "contains", value: "7" }, "invalid_filter"],
    ] as const) {
      const { service, log } = setUp(row);
      expect((await failure(service.previewChange("ws", "aud_a", raw))).code).toBe(code);
      expect(log).toEqual([]);
    }
  });

  it("checks the rule as saving would, then evaluates it; null is no rule", async () => {
    const { service, log } = setUp(audience(scoreAbove60));
    expect(await service.previewChange("ws", "aud_a", null)).toEqual({
      memberCount: 1,
      entering: { count: 1, sample: ["m1"] },
      leaving: { count: 0, sample: [] },
    });
    expect(log).toEqual(["checkRule aud_a null", "filterChange"]);
  });
});

describe("explain", () => {
  const inB: Filter = { all: [scoreAbove60, { field: "audience", op: "in", value: "aud_b" }] };

  it("explains each node from the member's bits in the audiences the rule names, in one read", async () => {
    const { service, log } = setUp(audience(inB), member({ isMember: true, inAudiences: ["aud_b"] }));
    expect(await service.explain("ws", "aud_a", "m1")).toEqual({
      isMember: true,
      reason: "rule",
      manual: null,
      rule: {
        matches: true,
        nodes: [
          { pointer: "", matches: true, value: null },
          { pointer: "/all/0", matches: true, value: "72" },
          { pointer: "/all/1", matches: true, value: true },
        ],
      },
    });
    expect(log).toEqual(["explained"]);
  });

  it("says manual for a member added by hand, exclude for one removed, null rule without a rule", async () => {
    const added = setUp(audience(null), member({ isMember: true, included: true }));
    expect(await added.service.explain("ws", "aud_a", "m1")).toEqual({
      isMember: true,
      reason: "manual",
      manual: "include",
      rule: null,
    });
    const removed = setUp(audience(scoreAbove60), member({ excluded: true }));
    expect(await removed.service.explain("ws", "aud_a", "m1")).toMatchObject({
      isMember: false,
      reason: null,
      manual: "exclude",
      rule: { matches: true },
    });
  });

  it("answers 404 for an unknown audience or member", async () => {
    expect((await failure(setUp(null).service.explain("ws", "aud_a", "m1"))).code).toBe("audience_not_found");
    expect((await failure(setUp(audience(null)).service.explain("ws", "aud_a", "m1"))).code).toBe("member_not_found");
  });
});
