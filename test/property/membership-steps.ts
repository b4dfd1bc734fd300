import fc from "fast-check";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { opsOf } from "../support/operator-shapes.ts";

// The random steps of the membership property (membership-model.test.ts): member writes, rules,
// adds, removes, merges, snapshots, archives and restores over a few members and audiences.

const MEMBER_IDS = ["m0", "m1", "m2", "M3", "m4", "ä5"];
const EMAILS = ["ada@example.com", "ADA@example.com", "bob@acme.io", "UNA@Acme.io", "carol@beta.org"];
const VALUES = ["Acme", "acme", "ÄRGER", "ärger", "beta", "Beta Labs", ""];
export const TYPES = { score: "number", lastOrder: "date" } as const;
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
export const BASE_AUDIENCES = 4;

const condition: fc.Arbitrary<Filter> = fc.oneof(
  fc.record({
    field: fc.constantFrom("fields.company", "fields.role", "email", "anyEmail", "id"),
    op: fc.constantFrom(...opsOf("string", "one")),
    value: fc.constantFrom(...VALUES, "ACME", "@acme.io", "m", "ä"),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constantFrom("fields.company", "anyEmail", "id"),
    op: fc.constantFrom(...opsOf("string", "list")),
    value: fc.subarray(["acme", "BETA", "m1", "bob@acme.io", "ärger"], { minLength: 1 }),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constantFrom("fields.company", "fields.role", "email", "anyEmail"),
    op: fc.constantFrom(...opsOf("string", "none")),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constant("createdAt"),
    op: fc.constantFrom(...opsOf("createdAt", "one")),
    value: fc.constantFrom("2000-01-01T00:00:00.000Z", "2999-01-01T00:00:00.000Z"),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constant("fields.score"),
    op: fc.constantFrom(...opsOf("number", "one")),
    value: fc.constantFrom("9", "10", "1e1", "-3.5", "0"),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constant("fields.score"),
    op: fc.constantFrom(...opsOf("number", "list")),
    value: fc.subarray(["10", "0", "-3.5e0"], { minLength: 1 }),
  }) as fc.Arbitrary<Filter>,
  fc.record({
    field: fc.constant("fields.lastOrder"),
    op: fc.constantFrom(...opsOf("date", "one")),
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

/**
 * In one audience and not in another: the shape where one request can move a member twice (added
 * to the first with data that puts it in the second), which its events must net out.
 */
const difference = (before: number): fc.Arbitrary<Filter> =>
  fc.uniqueArray(fc.integer({ min: 0, max: before - 1 }), { minLength: 2, maxLength: 2 }).map(
    ([a, b]) =>
      ({
        all: [
          { field: "audience", op: "in", value: `@${a}` },
          { field: "audience", op: "notIn", value: `@${b}` },
        ],
      }) as Filter,
  );

/** A rule for audience i: its audience conditions name only audiences before it. */
const filterFor = (i: number): fc.Arbitrary<Filter> => {
  const leaf = i === 0 ? condition : fc.oneof(condition, audienceCondition(i), audienceCondition(i));
  if (i >= 2) return fc.oneof(difference(i), filterTree(leaf));
  return filterTree(leaf);
};
const filterTree = (leaf: fc.Arbitrary<Filter>): fc.Arbitrary<Filter> => {
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
export const step = fc.oneof(
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
  {
    arbitrary: fc.record({
      kind: fc.constant("add" as const),
      audience,
      ids: fc.subarray(MEMBER_IDS, { minLength: 1, maxLength: 3 }),
      // Added with data: the rules that read it follow in the same request as the audience's own.
      fields: fc.option(fc.record({ company: fc.constantFrom(...VALUES), score: fc.constantFrom(...SCORES) })),
    }),
    weight: 2,
  },
  fc.record({ kind: fc.constant("remove" as const), audience, ids: fc.subarray(MEMBER_IDS, { minLength: 1 }) }),
  fc.record({ kind: fc.constant("merge" as const), a: audience, b: audience }),
  fc.record({ kind: fc.constant("snapshot" as const), audience }),
  fc.record({ kind: fc.constant("archive" as const), audience }),
  fc.record({ kind: fc.constant("restore" as const), audience }),
);
export type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

/**
 * Always run as well: members added to A0 with data that puts them in A1 move into "A0 and not
 * A1" (A2) and out again in one request, which its events must not tell.
 */
export const MOVED_TWICE: Step[] = [
  { kind: "filter", audience: 1, filter: { field: "fields.company", op: "eq", value: "acme" } },
  {
    kind: "filter",
    audience: 2,
    filter: {
      all: [
        { field: "audience", op: "in", value: "@0" },
        { field: "audience", op: "notIn", value: "@1" },
      ],
    },
  },
  { kind: "add", audience: 0, ids: ["m1", "m2"], fields: { company: "Acme", score: "" } },
  { kind: "add", audience: 0, ids: ["m4"], fields: null },
];
