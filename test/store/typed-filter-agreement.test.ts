// Typed rules are evaluated in two places: in process when members change (filter-match.ts) and
// in SQL when a rule is set or previewed (filter-sql.ts). Random filters over number, date and
// boolean fields, createdAt and relative time, on members holding every accepted form of value,
// must select the same members in both, and the same as the reference evaluator, on the embedded
// store and on PostgreSQL when TEST_DATABASE_URL is set.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FieldType } from "../../src/domain/field-types.ts";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { filterPreviewRepo } from "../../src/features/membership/filter-preview-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { type Filter, foldMember, parseFilter } from "../../src/features/membership/rules/filter.ts";
import { filterNodes } from "../../src/features/membership/rules/filter-explain.ts";
import { matches } from "../../src/features/membership/rules/filter-match.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openTestStore } from "../support/live-server.ts";
import { opsOf } from "../support/operator-shapes.ts";
import { type PlainMember, referenceMatches } from "../support/reference-filter.ts";

const TYPES: Record<string, FieldType> = { score: "number", lastOrder: "date", vip: "boolean" };
const SCORES = ["9", "10", "10.0", "-3.5", "1e3", "1000", "0", "-0", ".5", "+7", "1E2", ""];
const DATES = [
  "2026-01-31",
  "2026-01-31T00:00:00Z",
  "2026-01-30T23:00:00-01:00",
  "2026-06-14T12:00:00.5Z",
  "2026-06-15T11:59:59.999z",
  "2026-05-16T12:00:00+00:00",
  "2025-04-15",
  "",
];
const BOOLEANS = ["true", "FALSE", "True", ""];
/** The time relative conditions are evaluated at. */
const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);

const numberValue = fc.constantFrom("9", "10", "1e1", "-3.5", "0", "999.5", "1000");
const dateValue = fc.constantFrom("2026-01-31", "2026-01-31T00:00:00Z", "2026-06-14T12:00:00.5Z", "2025-04-15");
const duration = fc.constantFrom("P30D", "PT12H", "P1Y2M", "P1M", "P1W", "PT24H1S", "P2M");
const condition: fc.Arbitrary<Filter> = fc.oneof(
  fc.record({
    field: fc.constant("fields.score"),
    op: fc.constantFrom(...opsOf("number", "one")),
    value: numberValue,
  }),
  fc.record({
    field: fc.constant("fields.score"),
    op: fc.constantFrom(...opsOf("number", "list")),
    value: fc.uniqueArray(numberValue, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({
    field: fc.constant("fields.score"),
    op: fc.constantFrom(...opsOf("number", "pair")),
    value: fc.constant(["9", "10"]),
  }),
  fc.record({
    field: fc.constantFrom("fields.lastOrder", "createdAt"),
    op: fc.constantFrom(...opsOf("date", "one")),
    value: dateValue,
  }),
  fc.record({
    field: fc.constantFrom("fields.lastOrder", "createdAt"),
    op: fc.constantFrom(...opsOf("date", "pair")),
    value: fc.constant(["2026-01-31", "2026-06-14T12:00:00.5Z"]),
  }),
  fc.record({
    field: fc.constantFrom("fields.lastOrder", "createdAt"),
    op: fc.constantFrom(...opsOf("date", "duration")),
    value: duration,
  }),
  fc.record({
    field: fc.constant("fields.vip"),
    op: fc.constantFrom(...opsOf("boolean", "one")),
    value: fc.constantFrom("true", "FALSE"),
  }),
  fc.record({ field: fc.constant("fields.score"), op: fc.constantFrom(...opsOf("number", "none")) }),
  fc.record({ field: fc.constant("fields.lastOrder"), op: fc.constantFrom(...opsOf("date", "none")) }),
  fc.record({ field: fc.constant("fields.vip"), op: fc.constantFrom(...opsOf("boolean", "none")) }),
) as fc.Arbitrary<Filter>;
const filter: fc.Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: "small" },
    condition,
    fc.record({ all: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
    fc.record({ any: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
    fc.record({ not: tie("f") }) as fc.Arbitrary<Filter>,
  ),
})).f;

describe("typed rules in SQL and in process", () => {
  const ws = "ws_typed_agreement";
  const types = new Map(Object.entries(TYPES));
  let store: Store;
  let close: () => Promise<void>;
  const members: (PlainMember & { createdAt: Date })[] = [];

  beforeAll(async () => {
    ({ store, close } = await openTestStore());
    await workspaceRepo.create(store.db, { id: ws, name: ws });
    for (const [key, type] of types) {
      await store.db.$executeRaw`INSERT INTO field_types (workspace_id, key, type) VALUES (${ws}, ${key}, ${type})`;
    }
    // Each score with one of the dates and booleans.
    const inputs = SCORES.flatMap((score, i) => {
      const fields = {
        score,
        lastOrder: DATES[i % DATES.length] as string,
        vip: BOOLEANS[i % BOOLEANS.length] as string,
      };
      return [{ id: `m${i}`, data: { email: null, fields, alternativeEmails: [] } }];
    });
    await store.transaction((tx) => memberRepo.insert(tx, ws, inputs, []));
    // Creation times spread around the windows of the relative conditions (NOW less 0, 5, 10… days).
    await store.db.$executeRaw`UPDATE members SET created_at = ${new Date(NOW)}::timestamptz - (seq * interval '5 days')
      WHERE workspace_id = ${ws}`;
    const rows = await store.transaction((tx) =>
      memberRepo.findByIds(
        tx,
        ws,
        inputs.map((m) => m.id),
      ),
    );
    for (const row of rows) {
      members.push({ id: row.id, email: null, alternativeEmails: [], fields: row.fields, createdAt: row.createdAt });
    }
  });
  afterAll(() => close());

  it("select the same members as each other and as the reference evaluator", async () => {
    const context = { types, now: NOW, inAudience: () => false };
    const reference = { types: TYPES, now: NOW };
    const sizes = new Set<number>();
    await fc.assert(
      fc.asyncProperty(filter, async (f) => {
        const rule = parseFilter(f, { types });
        // With the workspace known (its values are cast behind it) and without (behind a pattern).
        const { rows } = await filterPreviewRepo.matching(
          store.db,
          ws,
          rule,
          { types, now: NOW, workspaceId: ws },
          1000,
        );
        const bySql = rows.map((row) => row.id).sort();
        const unguarded = await filterPreviewRepo.matching(store.db, ws, rule, { types, now: NOW }, 1000);
        expect(unguarded.rows.map((row) => row.id).sort()).toEqual(bySql);
        const inProcess = members.filter((m) => matches(rule, foldMember(m), m.createdAt, context)).map((m) => m.id);
        const byReference = members.filter((m) => referenceMatches(rule, m, reference)).map((m) => m.id);
        expect(inProcess.sort(), JSON.stringify(rule)).toEqual(byReference.sort());
        expect(bySql, JSON.stringify(rule)).toEqual(byReference);
        sizes.add(bySql.length);
      }),
      { numRuns: 150 },
    );
    // Filters that keep nobody or everybody alone would prove little.
    expect(sizes.size).toBeGreaterThan(SCORES.length / 2);
  });

  // Each store's statement has a shape of its own (node-counts-sql.ts); both run on either store.
  it.each(["postgres", "embedded"] as const)(
    "count the members of every node of a rule as matches() counts them (previewAudience nodeCounts, %s's statement)",
    async (shape) => {
      const context = { types, now: NOW, inAudience: () => false };
      await fc.assert(
        // With the workspace known (typed values cast behind it) and without (behind a pattern).
        fc.asyncProperty(filter, fc.boolean(), async (f, guarded) => {
          const rule = parseFilter(f, { types });
          const sqlContext = { types, now: NOW, ...(guarded ? { workspaceId: ws } : {}) };
          const counts = await filterPreviewRepo.nodeCounts(store.db, ws, rule, sqlContext, shape);
          const expected = filterNodes(rule).map(
            ({ node }) => members.filter((m) => matches(node, foldMember(m), m.createdAt, context)).length,
          );
          expect(counts, JSON.stringify(rule)).toEqual(expected);
        }),
        { numRuns: 100 },
      );
    },
  );
});
