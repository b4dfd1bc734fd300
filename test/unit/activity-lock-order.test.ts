// Writers of activities take row locks in one order: client ids (activity_ids), then activity
// types, as the ingest's store statement claims ids before it updates the types. The purge's two
// writes are held to that order here by the statements they send, in order.
import { describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import { activityPartitionRepo, monthOf } from "../../src/features/activities/activity-partitions-repo.ts";
import type { SqlClient } from "../../src/platform/db/sql-client.ts";

/** A client that keeps the text of each statement it is sent and answers nothing. */
function recording(): { tx: SqlClient; sent: string[] } {
  const sent: string[] = [];
  const text = (query: TemplateStringsArray | Prisma.Sql | string, values: unknown[]) =>
    typeof query === "string" ? query : (query instanceof Prisma.Sql ? query : new Prisma.Sql(query, values)).text;
  const tx: SqlClient = {
    $queryRaw: async (query, ...values) => {
      sent.push(text(query, values));
      return [] as never;
    },
    $queryRawUnsafe: async (query) => {
      sent.push(query);
      return [] as never;
    },
    $executeRaw: async (query, ...values) => {
      sent.push(text(query, values));
      return 0;
    },
    $executeRawUnsafe: async (query) => {
      sent.push(query);
      return 0;
    },
  };
  return { tx, sent };
}

/** Where the first statement writing each table comes, among those sent. */
function firstWrite(sent: string[], table: "activity_ids" | "activity_types"): number {
  const writes = table === "activity_ids" ? /DELETE FROM activity_ids/ : /UPDATE activity_types/;
  return sent.findIndex((sql) => writes.test(sql));
}

describe("the purge's lock order", () => {
  it("drops a month: activities' table lock, then the month's client ids, then its types' counts", async () => {
    const { tx, sent } = recording();
    await activityPartitionRepo.drop(tx, monthOf(new Date("2025-01-15T00:00:00Z")));
    expect(sent[0]).toMatch(/LOCK TABLE activities IN ACCESS EXCLUSIVE MODE/);
    expect(firstWrite(sent, "activity_ids")).toBeGreaterThan(0);
    expect(firstWrite(sent, "activity_ids")).toBeLessThan(firstWrite(sent, "activity_types"));
  });

  it("deletes what is older than the cutoff: the client ids in a statement before the types' counts", async () => {
    const { tx, sent } = recording();
    await activityPartitionRepo.deleteBefore(tx, new Date("2025-01-15T00:00:00Z"));
    const ids = firstWrite(sent, "activity_ids");
    expect(ids).toBeGreaterThanOrEqual(0);
    expect(ids).toBeLessThan(firstWrite(sent, "activity_types"));
  });
});
