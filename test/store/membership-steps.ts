// The random writes of membership-changes.test.ts and the rules they set: string, typed (a number
// field and a date field the workspace declares, relative time included), audience conditions and
// activity conditions (counts, windows, `where`, the retention's edge as the clock moves).
// Audience conditions only name audiences earlier in AUDIENCES (aud_b may name aud_c, aud_a
// either), so no rule, and no merge of rules, ever forms a cycle; that order is the reverse of the
// ids', so code that brings audiences up to date in id order rather than in dependency order fails.
import fc from "fast-check";
import type { Filter } from "../../src/features/membership/rules/filter.ts";

export const MEMBERS = ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"];
export const AUDIENCES = ["aud_c", "aud_b", "aud_a"];
/** The declared types of the workspace's fields; `company` stays a string. */
export const TYPES = { score: "number", lastOrder: "date" } as const;
/** The clock the service evaluates relative-time conditions at, when a run starts ("tick" moves it on). */
export const START = Date.UTC(2026, 5, 1);
export const DAY = 86_400_000;
/** How long activities count (ACTIVITY_RETENTION_DAYS of the service in both worlds). */
export const RETENTION_DAYS = 90;
export const ACTIVITY_TYPES = ["order", "visit"] as const;

const COMPANIES = ["Acme", "Beta"];
// Valid forms only (every write is checked against the declared type before it reaches here);
// "" is no value. Equal numbers in several forms, dates on and around the rules' bounds.
const SCORES = ["", "9", "10", "1e1", "10.0", "-3.5", "0", "+2", ".5"];
const DATES = [
  "",
  "2026-01-31",
  "2026-01-31T00:00:00Z",
  "2026-01-31t10:00:00z",
  "2025-12-31T23:00:00-01:00",
  "2026-04-30T23:59:59Z",
  "2026-05-01",
  "2026-05-15T12:00:00+02:00",
  "2026-05-31T23:59:59.999Z",
  "2026-06-01T00:00:00Z",
  "2026-06-02",
];

const score = (op: string, value: string | string[]) => ({ field: "fields.score", op, value }) as Filter;
const lastOrder = (op: string, value: string | string[]) => ({ field: "fields.lastOrder", op, value }) as Filter;
const inAudience = (value: string) => ({ field: "audience", op: "in", value }) as Filter;
const notInAudience = (value: string) => ({ field: "audience", op: "notIn", value }) as Filter;
const acme: Filter = { field: "fields.company", op: "eq", value: "acme" };
/** Rules that follow the clock, named for the cases membership-changes.test.ts pins. */
export const RECENT = lastOrder("withinLast", "P1M");
export const NOT_RECENT = lastOrder("notWithinLast", "P30D");
export const IN_B_OR_RECENT: Filter = { any: [inAudience("aud_b"), RECENT] };
export const ORDERED_RECENTLY: Filter = { activity: "order", withinLast: "P30D" };
export const VISITED_TWICE: Filter = { activity: "visit", count: { op: "gte", value: 2 } };

export const RULES: (Filter | null)[] = [
  null,
  acme,
  { field: "fields.company", op: "eq", value: "beta" },
  { any: [{ field: "id", op: "in", value: ["m1", "m2"] }, acme] },
  score("gt", "9"),
  score("between", ["-3.5", "1e1"]),
  score("in", ["10", "0"]),
  score("eq", "10"),
  score("ne", "10"),
  { not: score("lte", "9") },
  { all: [score("gte", "0"), lastOrder("after", "2026-01-31")] },
  { any: [score("lt", "0"), { field: "fields.lastOrder", op: "notExists" } as Filter] },
  lastOrder("before", "2026-05-01T00:00:00Z"),
  lastOrder("between", ["2026-01-31", "2026-05-15T10:00:00Z"]),
  RECENT,
  NOT_RECENT,
  inAudience("aud_c"),
  { all: [inAudience("aud_c"), score("lt", "10")] },
  { all: [notInAudience("aud_c"), acme] },
  { any: [inAudience("aud_c"), inAudience("aud_b")] },
  { all: [inAudience("aud_b"), notInAudience("aud_c")] },
  notInAudience("aud_b"),
  IN_B_OR_RECENT,
  ORDERED_RECENTLY,
  VISITED_TWICE,
  { not: { activity: "order", where: { field: "properties.amount", op: "gte", value: "50" }, notWithinLast: "P10D" } },
  { activity: "order", count: { op: "lt", value: 2 }, where: { field: "properties.amount", op: "lt", value: "50" } },
  { all: [{ activity: "visit", withinLast: "P1M" }, notInAudience("aud_c")] },
  { activity: "visit", between: ["2026-05-20T00:00:00Z", "2026-07-15T00:00:00Z"] },
  // With a field condition, not set algebra: each member tested against the aggregation's set.
  { any: [acme, { activity: "order", count: { op: "lt", value: 2 }, withinLast: "P1M" }] },
];

/** The audiences a filter's audience conditions name (walked here, not by the code under test). */
export function namedAudiences(filter: Filter | null): string[] {
  if (filter === null) return [];
  if ("all" in filter) return filter.all.flatMap(namedAudiences);
  if ("any" in filter) return filter.any.flatMap(namedAudiences);
  if ("not" in filter) return namedAudiences(filter.not);
  return !("activity" in filter) && filter.field === "audience" ? [filter.value as string] : [];
}

/** The rules an audience may take: those naming only audiences before it. */
const rulesFor = (audienceId: string) =>
  RULES.flatMap((rule, index) =>
    namedAudiences(rule).every((named) => AUDIENCES.indexOf(named) < AUDIENCES.indexOf(audienceId)) ? [index] : [],
  );

export type Data = Record<string, string>;

export type Step =
  | { op: "create"; ids: string[]; data: Data }
  | { op: "change"; ids: string[]; data: Data }
  | { op: "add" | "remove"; audience: string; ids: string[] }
  | { op: "rule"; audience: string; rule: number }
  | { op: "merge"; sources: [string, string] }
  | { op: "snapshot"; source: string }
  | { op: "delete"; ids: string[] }
  /** The clock moves on; relative-time rules follow it (membership.followClock). */
  | { op: "tick"; days: number }
  /** Each of these members did something, that long ago (membership.followActivities). */
  | { op: "act"; ids: string[]; type: (typeof ACTIVITY_TYPES)[number]; daysAgo: number; amount: number };

const ids = fc.subarray(MEMBERS, { minLength: 1 });
const audience = fc.constantFrom(...AUDIENCES);
const data: fc.Arbitrary<Data> = fc.record(
  { company: fc.constantFrom(...COMPANIES), score: fc.constantFrom(...SCORES), lastOrder: fc.constantFrom(...DATES) },
  { requiredKeys: ["company"] },
);

export const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant("create" as const), ids, data }), weight: 2 },
  // Often more members than readsByKey reads by key.
  {
    arbitrary: fc.record({ op: fc.constant("change" as const), ids: fc.subarray(MEMBERS, { minLength: 3 }), data }),
    weight: 3,
  },
  fc.record({ op: fc.constantFrom("add" as const, "remove" as const), audience, ids }),
  {
    arbitrary: audience.chain((a) =>
      fc.record({ op: fc.constant("rule" as const), audience: fc.constant(a), rule: fc.constantFrom(...rulesFor(a)) }),
    ),
    weight: 2,
  },
  fc.record({ op: fc.constant("merge" as const), sources: fc.uniqueArray(audience, { minLength: 2, maxLength: 2 }) }),
  fc.record({ op: fc.constant("snapshot" as const), source: audience }),
  fc.record({ op: fc.constant("delete" as const), ids }),
  fc.record({ op: fc.constant("tick" as const), days: fc.constantFrom(1, 10, 31, 45) }),
  {
    arbitrary: fc.record({
      op: fc.constant("act" as const),
      ids,
      type: fc.constantFrom(...ACTIVITY_TYPES),
      // Now, late arrivals inside and across the windows, one past the retention's edge soon.
      daysAgo: fc.constantFrom(0, 5, 20, 29, 40, 85),
      amount: fc.constantFrom(10, 50, 80),
    }),
    weight: 3,
  },
) as fc.Arbitrary<Step>;
