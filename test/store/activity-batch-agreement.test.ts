// An ingest skips the members whose new activities no condition of a rule counts, and decides in
// process what its own activities decide (activity-batch.ts); the database counts them with
// activity-sql.ts's countedSql. Random activity conditions over activities holding every JSON
// type of property (text in and out of ASCII, numbers, booleans, absent keys), at the edges of
// windows and of the retention, must count each activity in process as the database does wherever
// the process gives an answer, on the embedded store and on PostgreSQL when TEST_DATABASE_URL is set.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { activityRepo } from "../../src/features/membership/activity-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { type ActivityCondition, countHolds } from "../../src/features/membership/rules/activity-condition.ts";
import {
  countAtLeast,
  counts,
  type StoredActivity,
} from "../../src/features/membership/rules/activity-ingest/activity-batch.ts";
import { countedSql, joinedType } from "../../src/features/membership/rules/activity-sql.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openTestStore } from "../support/live-server.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);
const RETENTION_DAYS = 100;
const TYPE = "order";
/** Property values of every kind the conditions treat apart; `undefined`: the key is absent. */
const VALUES: (string | number | boolean | undefined)[] = [
  "Gold",
  "gold",
  "GOLDEN",
  "ÉCLAIR",
  "éclair",
  "Straße",
  "",
  "50",
  50,
  49.5,
  1e3,
  0,
  -3,
  true,
  false,
  undefined,
];
/** When the activities occurred: at and beside the edges of P30D, P1M, the retention, between. */
const AGES = [0, 1, 29.5, 30, 30.0000001, 31, 99.999, 100, 100.0000001, 45];
const BETWEEN: [string, string] = ["2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z"];

/** An activity's properties: the value as `tier` (with `n` on every third), none, or other keys only. */
function propertiesOf(value: string | number | boolean | undefined, j: number): StoredActivity["properties"] {
  if (value === undefined) return j % 2 === 0 ? null : { other: 1 };
  return j % 3 === 0 ? { tier: value, n: 7 } : { tier: value };
}

const activities: StoredActivity[] = AGES.flatMap((age, i) =>
  VALUES.map((value, j) => ({
    seq: 0,
    type: i % 4 === 3 ? "visit" : TYPE,
    occurredAt: new Date(Math.round(NOW - age * DAY)),
    properties: propertiesOf(value, i + j),
  })),
).map((activity, i) => ({ ...activity, seq: i + 1 }));

const text = fc.constantFrom("gold", "GOLD", "old", "Gol", "éclair", "ÉCLAIR", "strasse", "", "50", "true", "false");
const number = fc.constantFrom("50", "49.5", "1000", "0", "-3", "1e3");
const whereCondition = fc.oneof(
  fc.record({ field: fc.constant("properties.tier"), op: fc.constantFrom("eq", "ne"), value: fc.oneof(text, number) }),
  fc.record({
    field: fc.constant("properties.tier"),
    op: fc.constantFrom("in", "notIn"),
    value: fc.uniqueArray(fc.oneof(text, number), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({
    field: fc.constant("properties.tier"),
    op: fc.constantFrom("contains", "startsWith", "endsWith"),
    value: text,
  }),
  fc.record({ field: fc.constant("properties.tier"), op: fc.constantFrom("gt", "gte", "lt", "lte"), value: number }),
  fc.record({ field: fc.constant("properties.tier"), op: fc.constant("between"), value: fc.constant(["0", "50"]) }),
  fc.record({ field: fc.constantFrom("properties.tier", "properties.n"), op: fc.constantFrom("exists", "notExists") }),
  fc.record({
    field: fc.constant("type"),
    op: fc.constantFrom("eq", "startsWith"),
    value: fc.constantFrom("order", "Ord"),
  }),
);
type Where = NonNullable<ActivityCondition["where"]>;
const where: fc.Arbitrary<Where> = fc.letrec<{ where: Where }>((tie) => ({
  where: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    whereCondition as fc.Arbitrary<Where>,
    fc.record({ all: fc.array(tie("where"), { minLength: 1, maxLength: 3 }) }),
    fc.record({ any: fc.array(tie("where"), { minLength: 1, maxLength: 3 }) }),
    fc.record({ not: tie("where") }),
  ),
})).where;
const windowed = fc.oneof(
  fc.constant({}),
  fc.record({ withinLast: fc.constantFrom("P30D", "P1M", "PT12H") }),
  fc.record({ notWithinLast: fc.constantFrom("P30D", "P1M") }),
  fc.constant({ between: BETWEEN }),
);
const condition: fc.Arbitrary<ActivityCondition> = fc
  .tuple(fc.option(where, { nil: undefined }), windowed)
  .map(([w, window]) => ({ activity: TYPE, count: { op: "gte", value: 1 }, ...(w ? { where: w } : {}), ...window }));

describe("what an ingest decides in process", () => {
  let store: Store;
  let close: () => Promise<void>;
  const ws = "ws_activity_batch";

  beforeAll(async () => {
    ({ store, close } = await openTestStore());
    await workspaceRepo.create(store.db, { id: ws, name: ws });
    await store.transaction(async (tx) => {
      const inputs = activities.map((a) => ({
        id: `m${a.seq}`,
        data: { email: null, fields: {}, alternativeEmails: [] },
      }));
      const { seqs } = await memberRepo.insert(tx, ws, inputs, []);
      const rows = activities.map((a) => ({
        seq: seqs.get(`m${a.seq}`) as number,
        type: a.type,
        occurredAt: a.occurredAt as Date,
        id: undefined,
        properties: a.properties ?? null,
      }));
      rows.forEach((row, i) => {
        (activities[i] as StoredActivity).seq = row.seq;
      });
      await activityRepo.store(tx, ws, rows);
    });
  });
  afterAll(() => close());

  it("count each activity as the database does wherever the process answers", async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(condition, async (c) => {
        const context = { now: NOW, activityRetentionDays: RETENTION_DAYS };
        const rows = await store.db.$queryRaw<{ seq: number }[]>`
          SELECT a.member_seq AS seq FROM activities AS a
          JOIN activity_types AS t ON t.workspace_id = a.workspace_id AND t.type_id = a.type_id
          WHERE a.workspace_id = ${ws} AND ${countedSql(c, context, joinedType(c))}`;
        const inDatabase = new Set(rows.map((row) => row.seq));
        for (const activity of activities) {
          const inProcess = counts(c, activity, NOW, RETENTION_DAYS);
          if (inProcess === undefined) continue;
          answered += 1;
          expect({ activity, counted: inProcess }).toEqual({ activity, counted: inDatabase.has(activity.seq) });
        }
      }),
      { numRuns: 60 },
    );
    // Most answers are the process's own: only text beyond ASCII is left to the database.
    expect(answered).toBeGreaterThan(60 * activities.length * 0.5);
  });

  it("read a count's bound as the count it bounds would be read", () => {
    const ops = ["eq", "ne", "gt", "gte", "lt", "lte"] as const;
    for (const op of ops) {
      for (let value = 0; value <= 3; value++) {
        const c: ActivityCondition = { activity: TYPE, count: { op, value } };
        for (let least = 0; least <= 4; least++) {
          const told = countAtLeast(c, least);
          if (told === undefined) continue;
          // Every count at least `least` (up to well past the value) gives the answer told.
          for (let n = least; n <= 8; n++)
            expect({ op, value, least, n, holds: countHolds(c, n) }).toEqual({
              op,
              value,
              least,
              n,
              holds: told,
            });
        }
      }
    }
    // It tells what it can: gte 1 holds once one is counted.
    expect(countAtLeast({ activity: TYPE, count: { op: "gte", value: 1 } }, 1)).toBe(true);
    expect(countAtLeast({ activity: TYPE, count: { op: "lt", value: 2 } }, 2)).toBe(false);
  });
});
