// The member lock and a write's first read go in one statement (lock-repo.ts memberWritesReading,
// membership-service.ts lockWithFirstRead). A statement reads in a snapshot taken before the lock
// it waits for, so the read stands only when no member write committed while it waited; else the
// write reads again under the lock. The race is made here on PostgreSQL: one write holds the lock
// and creates a member while another's statement waits for it. The embedded store runs one
// transaction at a time (the second does not begin before the first has committed), so there the
// race cannot happen and only the uncontended statement is checked.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import { lockRepo } from "../../src/features/membership/lock-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { fieldTypeRepo } from "../../src/features/membership/rules/field-type-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import type { SqlClient } from "../../src/platform/db/sql-client.ts";
import { openTestStore } from "../support/live-server.ts";
import { storeMembership } from "../support/store-membership.ts";

let store: Store;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(() => close());

/** A workspace of its own per test. */
let workspaces = 0;
async function workspace(): Promise<string> {
  const id = `ws_member_lock_${++workspaces}`;
  await workspaceRepo.create(store.db, { id, name: id });
  return id;
}

/** The ids of the workspace's members, as the statement's snapshot holds them. */
const memberIdsJson = (ws: string) =>
  Prisma.sql`(SELECT coalesce(json_agg(id ORDER BY id), '[]')::text FROM members WHERE workspace_id = ${ws})`;

const create = (ws: string, id: string) =>
  storeMembership(store).workspaceWrite(ws, { memberWrites: true }, (w) =>
    memberRepo.insert(w.tx, ws, [{ id, data: { email: null, fields: {}, alternativeEmails: [] } }], []),
  );

/** How many statements of this database wait for a lock (PostgreSQL). */
const waiting = async () =>
  (
    await store.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'`
  )[0]?.n;

/**
 * Runs `waiter` while another write holds the member lock and makes `change`; that write commits
 * once the waiter's statement waits for the lock, so the change is made after the waiter's
 * snapshot and before its lock.
 */
async function whileWriting<T>(ws: string, change: (tx: SqlClient) => Promise<unknown>, waiter: () => Promise<T>) {
  let started: Promise<T> | undefined;
  await storeMembership(store).workspaceWrite(ws, { memberWrites: true }, async (w) => {
    await change(w.tx);
    started = waiter();
    await vi.waitFor(async () => expect(await waiting()).toBe(1), { timeout: 10_000, interval: 20 });
  });
  return started as Promise<T>;
}

/** As whileWriting, the other write creating member `id`. */
const whileCreating = <T>(ws: string, id: string, waiter: () => Promise<T>) =>
  whileWriting(
    ws,
    (tx) => memberRepo.insert(tx, ws, [{ id, data: { email: null, fields: {}, alternativeEmails: [] } }], []),
    waiter,
  );

describe("the member lock with the write's first read", () => {
  it("answers the read when no member write came between its snapshot and the lock", async () => {
    const ws = await workspace();
    await create(ws, "ada");
    const read = await store.transaction((tx) => lockRepo.memberWritesReading(tx, ws, memberIdsJson(ws)));
    expect(read === undefined ? undefined : JSON.parse(read)).toEqual(["ada"]);
  });

  it("reads members to change with the lock, in one statement", async () => {
    const ws = await workspace();
    await create(ws, "ada");
    const read = await storeMembership(store).workspaceWrite(ws, { memberWrites: true, lockWithFirstRead: true }, (w) =>
      w.readMembers(["ada"]),
    );
    expect(read.rows.map((row) => row.id)).toEqual(["ada"]);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "says to read again when a member write committed while the statement waited for the lock",
    async () => {
      const ws = await workspace();
      await create(ws, "ada");
      const read = await whileCreating(ws, "bob", () =>
        store.transaction((tx) => lockRepo.memberWritesReading(tx, ws, memberIdsJson(ws))),
      );
      expect(read).toBeUndefined();
    },
  );

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "with an audience's lock after it: the audience as it stands, the read to be made again",
    async () => {
      const ws = await workspace();
      await store.transaction((tx) => audienceRepo.create(tx, { workspaceId: ws, id: "aud_a", name: "A" }));
      const { row, read } = await whileCreating(ws, "bob", () =>
        store.transaction((tx) => lockRepo.audienceReading(tx, ws, "aud_a", memberIdsJson(ws), true)),
      );
      expect([row?.id, read]).toEqual(["aud_a", undefined]);
    },
  );

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "a member created while a write waited for the lock is in what that write reads",
    async () => {
      const ws = await workspace();
      const read = await whileCreating(ws, "ada", () =>
        storeMembership(store).workspaceWrite(ws, { memberWrites: true, lockWithFirstRead: true }, (w) =>
          w.readMembers(["ada"]),
        ),
      );
      expect(read.rows.map((row) => row.id)).toEqual(["ada"]);
    },
  );

  it("reads the field types with the lock, in one statement", async () => {
    const ws = await workspace();
    await storeMembership(store).workspaceWrite(ws, { memberWrites: true }, (w) =>
      fieldTypeRepo.declare(w.tx, ws, "score", "number"),
    );
    const types = await storeMembership(store).workspaceWrite(
      ws,
      { memberWrites: true, lockWithFirstRead: true },
      (w) => w.readFieldTypes(),
    );
    expect(types).toEqual(new Map([["score", "number"]]));
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "a field declared while a rule's change waited for the lock is in the types it reads",
    async () => {
      const ws = await workspace();
      const types = await whileWriting(
        ws,
        (tx) => fieldTypeRepo.declare(tx, ws, "score", "number"),
        () =>
          storeMembership(store).workspaceWrite(ws, { memberWrites: true, lockWithFirstRead: true }, (w) =>
            w.readFieldTypes(),
          ),
      );
      expect(types).toEqual(new Map([["score", "number"]]));
    },
  );

  it("reads an upsert's candidates with the lock, in one statement", async () => {
    const ws = await workspace();
    await create(ws, "ada");
    const found = await storeMembership(store).workspaceWrite(
      ws,
      { memberWrites: true, lockWithFirstRead: true },
      (w) => w.readCandidates(["ada", "bob"], ["ada@example.com"]),
    );
    expect([found.rows.map((row) => row.id), [...found.owners]]).toEqual([["ada"], []]);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "a member created while an upsert waited for the lock is among its candidates",
    async () => {
      const ws = await workspace();
      const found = await whileCreating(ws, "bob", () =>
        storeMembership(store).workspaceWrite(ws, { memberWrites: true, lockWithFirstRead: true }, (w) =>
          w.readCandidates(["bob"], []),
        ),
      );
      expect(found.rows.map((row) => row.id)).toEqual(["bob"]);
    },
  );
});
