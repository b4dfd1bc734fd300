// A probe for one audience's chunk at one member number (joinChunk by key) must be exact through
// either index on membership_chunks. Without statistics the planner chooses between the primary
// key and the index by chunk number by their size; when that index ended at the chunk, the probe
// read every audience's chunk at that number and filtered them (following one member's change
// through 100 rule audiences read 100 × 100 chunk rows). On the embedded store, and on PostgreSQL
// when TEST_DATABASE_URL is set.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import { storedBits } from "../../src/features/membership/member-bits-sql.ts";
import { joinChunk } from "../../src/features/membership/membership-sql.ts";
import type { Store } from "../../src/platform/db/database.ts";
import type { SqlClient } from "../../src/platform/db/sql-client.ts";
import { openTestStore } from "../support/live-server.ts";

const AUDIENCES = 20;

let store: Store;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
  await store.db.$executeRawUnsafe(`INSERT INTO workspaces (workspace_id, name) VALUES ('ws_probe', 'probe')`);
  await store.db.$executeRawUnsafe(
    `INSERT INTO audiences (workspace_id, id, name)
     SELECT 'ws_probe', 'aud_' || i, 'audience ' || i FROM generate_series(1, ${AUDIENCES}) AS i`,
  );
  // Every audience has a member chunk at numbers 0 and 1.
  await store.db.$executeRawUnsafe(
    `INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits, count)
     SELECT 'ws_probe', 'aud_' || i, 'member', c, B'1'::bit(8192), 1
     FROM generate_series(1, ${AUDIENCES}) AS i CROSS JOIN generate_series(0, 1) AS c`,
  );
});
afterAll(() => close());

/** The plan of probing audience aud_7's member chunk at number 1. */
async function probePlan(tx: SqlClient): Promise<string> {
  const at = { audience: Prisma.sql`n.audience_id`, chunk: Prisma.sql`n.chunk` };
  const plan = await tx.$queryRaw<{ "QUERY PLAN": string }[]>`
    EXPLAIN SELECT p.bits FROM (VALUES ('aud_7'::text, 1)) AS n(audience_id, chunk)
    ${joinChunk("p", "ws_probe", "member", at, true)}`;
  return plan.map((row) => row["QUERY PLAN"]).join("\n");
}

class RolledBack extends Error {}

/** Runs fn in a transaction that is rolled back afterwards (DDL included). */
async function rolledBack<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
  let result: T | undefined;
  await store
    .transaction(async (tx) => {
      result = await fn(tx);
      throw new RolledBack();
    })
    .catch((error) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  return result as T;
}

const exact = (plan: string) => {
  expect(plan).toMatch(/Index Cond: .*audience_id = /);
  expect(plan).not.toMatch(/Filter: .*audience_id/);
};

describe("a chunk probe by key", () => {
  it("looks up the one chunk, whichever index the planner takes", async () => {
    exact(await rolledBack(probePlan));
    // Without the primary key, only the index by chunk number is left: it is exact too.
    const withoutKey = await rolledBack(async (tx) => {
      await tx.$executeRawUnsafe("ALTER TABLE membership_chunks DROP CONSTRAINT membership_chunks_pkey");
      return probePlan(tx);
    });
    expect(withoutKey).toContain("membership_chunks_workspace_id_kind_chunk_audience_id_idx");
    exact(withoutKey);
  });

  it("finds the chunk it names", async () => {
    const at = { audience: Prisma.sql`n.audience_id`, chunk: Prisma.sql`n.chunk` };
    const rows = await store.db.$queryRaw<{ audience: string; found: boolean }[]>`
      SELECT n.audience_id AS audience, ${storedBits("p")} IS NOT NULL AS found
      FROM (VALUES ('aud_7'::text, 1), ('aud_8'::text, 2)) AS n(audience_id, chunk)
      ${joinChunk("p", "ws_probe", "member", at, true)} ORDER BY 1`;
    expect(rows).toEqual([
      { audience: "aud_7", found: true },
      { audience: "aud_8", found: false },
    ]);
  });
});
