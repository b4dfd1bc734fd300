// An audience condition is evaluated three ways: by set algebra on the named audiences' chunks
// when a rule is made only of them (audience-algebra-sql.ts), by reading each named audience's
// chunks once for a statement that tests every member (a preview, nodeCounts, a dry run, a rule
// set: filter-sql.ts with member-bits-sql.ts's inChunks), and by a probe of the member's chunk
// where a statement tests a few members (a member write's rule checks). For random rules over
// audiences of random members (members in three chunks, an audience with none in the middle
// chunk, one whose rule matches members removed by hand, an empty one), all three must select the
// members the in-process evaluator selects, on the embedded store and on PostgreSQL when
// TEST_DATABASE_URL is set.
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Prisma } from "../../generated/prisma/client.ts";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import { filterPreviewRepo } from "../../src/features/membership/filter-preview-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { membershipRepo } from "../../src/features/membership/membership-repo.ts";
import { audienceAlgebraSql } from "../../src/features/membership/rules/audience-algebra-sql.ts";
import { type Filter, foldMember } from "../../src/features/membership/rules/filter.ts";
import { filterNodes } from "../../src/features/membership/rules/filter-explain.ts";
import { matches } from "../../src/features/membership/rules/filter-match.ts";
import { filterSql, type SqlContext } from "../../src/features/membership/rules/filter-sql.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openTestStore } from "../support/live-server.ts";

const ws = "ws_audience_algebra";
// Members spread over three chunks, so that chunks present in one set and not another occur.
const SEQS = [0, 1, 2, 5, 8191, 8192, 8200, 20000, 20001];
const pick = (n: number) => SEQS.filter((_, i) => (i * 7 + n) % 3 !== 0);
/** Every member matches the rule of aud_ruled; these are removed from it by hand. */
const EXCLUDED = [1, 8192, 20000];
/** The members of each audience. */
const SETS: Record<string, number[]> = {
  aud_x: pick(0),
  aud_y: pick(1),
  aud_z: SEQS.slice(4),
  aud_gap: [0, 20001],
  aud_ruled: SEQS.filter((seq) => !EXCLUDED.includes(seq)),
  aud_empty: [],
};
const CREATED = new Date("2026-01-01T00:00:00Z");

let store: Store;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
  await workspaceRepo.create(store.db, { id: ws, name: ws });
  await store.transaction(async (tx) => {
    for (const seq of SEQS) {
      await tx.$executeRaw`UPDATE workspaces SET member_seq = ${seq} WHERE workspace_id = ${ws}`;
      await memberRepo.insert(
        tx,
        ws,
        [{ id: `m${seq}`, data: { email: null, fields: {}, alternativeEmails: [] } }],
        [],
      );
    }
    for (const id of Object.keys(SETS)) await audienceRepo.create(tx, { workspaceId: ws, id, name: id });
    for (const id of ["aud_x", "aud_y", "aud_z", "aud_gap"]) {
      await membershipRepo.include(tx, ws, id, SETS[id] as number[]);
    }
    await membershipRepo.recompute(tx, ws, "aud_ruled", { field: "id", op: "exists" }, context);
    await membershipRepo.exclude(
      tx,
      ws,
      "aud_ruled",
      EXCLUDED.map((seq) => `m${seq}`),
    );
  });
});
afterAll(() => close());

const context: SqlContext = { types: new Map(), now: 0, workspaceId: ws };

const audienceCondition: fc.Arbitrary<Filter> = fc.record({
  field: fc.constant("audience"),
  op: fc.constantFrom("in", "notIn"),
  value: fc.constantFrom(...Object.keys(SETS)),
}) as fc.Arbitrary<Filter>;
/** A condition on the member itself, so that rules mixing both are drawn too. */
const idCondition = fc.constant<Filter>({ field: "id", op: "in", value: ["m0", "m8192", "m20001"] });
const filterOf = (condition: fc.Arbitrary<Filter>) =>
  fc.letrec<{ f: Filter }>((tie) => ({
    f: fc.oneof(
      { depthSize: "small" },
      condition,
      fc.record({ all: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
      fc.record({ any: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
      fc.record({ not: tie("f") }) as fc.Arbitrary<Filter>,
    ),
  })).f;

/** The members the in-process evaluator says `rule` matches, by number. */
const expected = (rule: Filter) =>
  SEQS.filter((seq) =>
    matches(rule, foldMember({ id: `m${seq}`, email: null, fields: {}, alternativeEmails: [] }), CREATED, {
      ...context,
      inAudience: (id) => (SETS[id] as number[]).includes(seq),
    }),
  );

const selected = async (condition: Prisma.Sql) =>
  (
    await store.db.$queryRaw<{ seq: number }[]>`
      SELECT m.seq FROM members AS m WHERE m.workspace_id = ${ws} AND ${condition} ORDER BY 1`
  ).map((r) => r.seq);

it("selects by set algebra, by the sets read once and by probes the members the rule matches", async () => {
  const sizes = new Set<number>();
  await fc.assert(
    fc.asyncProperty(filterOf(audienceCondition), async (rule) => {
      const want = expected(rule);
      const algebra = audienceAlgebraSql(ws, rule, context) as Prisma.Sql;
      const byChunks = await store.db.$queryRaw<{ seq: number }[]>`
        SELECT r.chunk * 8192 + b.i AS seq FROM (${algebra}) AS r
        CROSS JOIN generate_series(0, 8191) AS b(i) WHERE get_bit(r.bits, b.i) = 1 ORDER BY 1`;
      const label = JSON.stringify(rule);
      expect(
        byChunks.map((r) => Number(r.seq)),
        label,
      ).toEqual(want);
      expect(await selected(filterSql(rule, context)), label).toEqual(want);
      expect(await selected(filterSql(rule, { ...context, fewMembers: true })), label).toEqual(want);
      sizes.add(want.length);
    }),
    { numRuns: 120 },
  );
  expect(sizes.size).toBeGreaterThan(3);
  expect(
    audienceAlgebraSql(
      ws,
      {
        all: [
          { field: "audience", op: "in", value: "aud_x" },
          { field: "id", op: "exists" },
        ],
      },
      context,
    ),
  ).toBeNull();
});

it("previews rules mixing audience and other conditions, and counts their nodes, as the evaluator does", async () => {
  await fc.assert(
    fc.asyncProperty(
      filterOf(fc.oneof(audienceCondition, idCondition)),
      fc.constantFrom("postgres", "embedded" as const),
      async (rule, shape) => {
        const label = JSON.stringify(rule);
        const want = expected(rule);
        const preview = await filterPreviewRepo.matching(store.db, ws, rule, context, SEQS.length);
        expect(preview.totalCount, label).toBe(want.length);
        expect(preview.rows.map((row) => row.id).sort(), label).toEqual(want.map((seq) => `m${seq}`).sort());
        const counts = await filterPreviewRepo.nodeCounts(store.db, ws, rule, context, shape);
        expect(counts, label).toEqual(filterNodes(rule).map(({ node }) => expected(node).length));
      },
    ),
    { numRuns: 80 },
  );
});
