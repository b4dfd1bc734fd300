// A rule made only of audience conditions is computed by set algebra on the named audiences'
// chunks (audience-algebra-sql.ts) instead of testing every member (filter-sql.ts). For random
// such rules over audiences of random members, both must select the same members, on the
// embedded store and on PostgreSQL when TEST_DATABASE_URL is set.
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Prisma } from "../../generated/prisma/client.ts";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { membershipRepo } from "../../src/features/membership/membership-repo.ts";
import { audienceAlgebraSql } from "../../src/features/membership/rules/audience-algebra-sql.ts";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { filterSql } from "../../src/features/membership/rules/filter-sql.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { openTestStore } from "../support/live-server.ts";

const ws = "ws_audience_algebra";
const AUDIENCES = ["aud_x", "aud_y", "aud_z", "aud_empty"];
// Members spread over three chunks, so that chunks present in one set and not another occur.
const SEQS = [0, 1, 2, 5, 8191, 8192, 8200, 20000, 20001];

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
    for (const id of AUDIENCES) await audienceRepo.create(tx, { workspaceId: ws, id, name: id });
    const pick = (n: number) => SEQS.filter((_, i) => (i * 7 + n) % 3 !== 0);
    await membershipRepo.include(tx, ws, "aud_x", pick(0));
    await membershipRepo.include(tx, ws, "aud_y", pick(1));
    await membershipRepo.include(tx, ws, "aud_z", SEQS.slice(4));
  });
});
afterAll(() => close());

const condition: fc.Arbitrary<Filter> = fc.record({
  field: fc.constant("audience"),
  op: fc.constantFrom("in", "notIn"),
  value: fc.constantFrom(...AUDIENCES),
}) as fc.Arbitrary<Filter>;
const filter: fc.Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: "small" },
    condition,
    fc.record({ all: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
    fc.record({ any: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }) as fc.Arbitrary<Filter>,
    fc.record({ not: tie("f") }) as fc.Arbitrary<Filter>,
  ),
})).f;

it("selects by set algebra the members a test of every member selects", async () => {
  const sizes = new Set<number>();
  await fc.assert(
    fc.asyncProperty(filter, async (rule) => {
      const algebra = audienceAlgebraSql(ws, rule) as Prisma.Sql;
      const byChunks = await store.db.$queryRaw<{ seq: number }[]>`
        SELECT r.chunk * 8192 + b.i AS seq FROM (${algebra}) AS r
        CROSS JOIN generate_series(0, 8191) AS b(i) WHERE get_bit(r.bits, b.i) = 1 ORDER BY 1`;
      const byMembers = await store.db.$queryRaw<{ seq: number }[]>`
        SELECT m.seq FROM members AS m
        WHERE m.workspace_id = ${ws} AND ${filterSql(rule, { types: new Map(), now: 0 })} ORDER BY 1`;
      expect(
        byChunks.map((r) => Number(r.seq)),
        JSON.stringify(rule),
      ).toEqual(byMembers.map((r) => r.seq));
      sizes.add(byMembers.length);
    }),
    { numRuns: 120 },
  );
  expect(sizes.size).toBeGreaterThan(3);
  expect(
    audienceAlgebraSql(ws, {
      all: [
        { field: "audience", op: "in", value: "aud_x" },
        { field: "id", op: "exists" },
      ],
    }),
  ).toBeNull();
});
