import { describe, expect, it } from "vitest";
import { RULE } from "../../scripts/bench/scenarios/insight-rules.ts";
import { CONFIGURATION } from "../../src/config/configuration.ts";
import { BadRequestError } from "../../src/domain/errors.ts";
import { type Filter, parseFilter } from "../../src/features/membership/rules/filter.ts";
import { checkFilterCost, type FilterWork } from "../../src/features/membership/rules/filter-cost.ts";

// The default budget against the shapes it was set for: ordinary rules at a million members pass,
// the previews of the issue that held the embedded store for tens of seconds do not.
const types = new Map([["score", "number" as const]]);
const BUDGET = CONFIGURATION.settings.rules.costBudget.byStore.postgres;
const parse = (filter: unknown) => parseFilter(filter, { types });
const refusal = (filter: Filter, members: number, work: FilterWork) => {
  try {
    checkFilterCost(filter, types, members, work, BUDGET);
  } catch (error) {
    if (error instanceof BadRequestError) return error;
    throw error;
  }
  return undefined;
};

/** The benchmark's rule: 10 conditions, two on a number. */
const benchRule = parse(RULE);
const tenSimple = parse({ all: Array.from({ length: 10 }, (_, i) => ({ field: "email", op: "ne", value: `x${i}` })) });

describe("the default filter cost budget", () => {
  it("accepts ordinary rules at 1,000,000 members, in every kind of work", () => {
    for (const work of ["preview", "nodeCounts", "dryRun", "rule"] as const) {
      expect(refusal(benchRule, 1_000_000, work)).toBeUndefined();
      expect(refusal(tenSimple, 1_000_000, work)).toBeUndefined();
    }
  });

  it("refuses 100 notIn conditions with nodeCounts at 200,000 members", () => {
    const values = Array.from({ length: 100 }, (_, i) => `v${i}`);
    const filter = parse({
      all: Array.from({ length: 100 }, () => ({ field: "fields.plan", op: "notIn", value: values })),
    });
    const error = refusal(filter, 200_000, "nodeCounts");
    expect(error?.code).toBe("filter_too_costly");
    expect(error?.detail).toContain("200,000 members");
    expect(error?.detail).toContain("more than the 18,000,000");
  });

  it("refuses 100 anyEmail contains of 1,024 characters at 200,000 members, naming the costliest first", () => {
    const filter = parse({
      any: Array.from({ length: 100 }, (_, i) =>
        i === 7
          ? { field: "anyEmail", op: "contains", value: "y".repeat(1_024) }
          : { field: "anyEmail", op: "contains", value: "x".repeat(500) },
      ),
    });
    const error = refusal(filter, 200_000, "preview");
    expect(error?.errors?.map((e) => e.pointer)).toEqual([
      "/body/filter/any/7",
      "/body/filter/any/0",
      "/body/filter/any/1",
    ]);
  });

  it("has nothing to refuse in an empty workspace, or with the bound lifted", () => {
    const filter = parse({
      any: Array.from({ length: 100 }, () => ({ field: "anyEmail", op: "contains", value: "z" })),
    });
    expect(refusal(filter, 0, "nodeCounts")).toBeUndefined();
    expect(() => checkFilterCost(filter, types, 10_000_000, "nodeCounts", 0)).not.toThrow();
  });
});
