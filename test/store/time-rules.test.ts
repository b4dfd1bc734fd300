// Relative-time rules follow the clock: a tick reads only the members near a window's edge
// (member_dates, members.created_at) and brings each audience up to date. With a clock the test
// moves, after every tick each audience must hold exactly the members the reference evaluator
// says at that instant, the changes must be reported with reason time (dependency for an
// audience whose rule names one), and member_dates must hold every date value as an instant.
// On the embedded store, and on PostgreSQL when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/client.ts";
import { workspaceRepo } from "../../src/features/admin/workspace-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import { storedHas } from "../../src/features/membership/member-bits-sql.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { membersOf } from "../../src/features/membership/member-set.ts";
import { fieldTypeRepo } from "../../src/features/membership/rules/field-type-repo.ts";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import type { Store } from "../../src/platform/db/database.ts";
import type { EventSink } from "../support/event-sink.ts";
import { openTestStore } from "../support/live-server.ts";
import { type PlainMember, referenceMatches } from "../support/reference-filter.ts";
import { storeMembership } from "../support/store-membership.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (at: number) => new Date(at).toISOString();

describe("relative-time rules and the clock", () => {
  const ws = "ws_time_rules";
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore());
    await workspaceRepo.create(store.db, { id: ws, name: ws });
  });
  afterAll(() => close());

  it("move members in and out as their dates cross a window's edges, and no others", async () => {
    let now = Date.now();
    const t0 = now;
    const seen: { audienceId: string; reason: string; entered: string[]; left: string[] }[] = [];
    const names = new Map<number, string>();
    const events: EventSink = {
      async record(_tx, _ws, entries) {
        for (const e of entries) {
          if (e.type !== "audience.members_changed") continue;
          const read = (set: typeof e.entered) => membersOf(set).map((seq) => names.get(seq) as string);
          seen.push({ audienceId: e.audienceId, reason: e.reason, entered: read(e.entered), left: read(e.left) });
        }
      },
      committed: () => {},
    };
    const membership = storeMembership(store, { events, clock: () => now });
    const dates: Record<string, string> = {
      leavesFirst: iso(t0 - 29.5 * DAY),
      alreadyOut: iso(t0 - 31 * DAY),
      future: iso(t0 + DAY),
      noDate: "",
      calendarDate: iso(t0 - 10 * DAY).slice(0, 10),
      withOffset: iso(t0 - 20 * DAY).replace("Z", "+00:00"),
    };
    const plain = new Map<string, PlainMember>();
    // Created before the field is a date: declaring it fills member_dates from the stored values.
    await membership.workspaceWrite(ws, { memberWrites: true }, async (w) => {
      const inputs = Object.entries(dates).map(([id, lastOrder]) => ({
        id,
        data: { email: null, fields: { lastOrder }, alternativeEmails: [] },
      }));
      const { seqs } = await memberRepo.insert(w.tx, ws, inputs, []);
      for (const [id, seq] of seqs) names.set(seq, id);
      await fieldTypeRepo.declare(w.tx, ws, "lastOrder", "date");
    });
    for (const row of await store.transaction((tx) => memberRepo.findByIds(tx, ws, Object.keys(dates)))) {
      plain.set(row.id, {
        id: row.id,
        email: null,
        alternativeEmails: [],
        fields: row.fields,
        createdAt: row.createdAt,
      });
    }
    const rules: Record<string, Filter> = {
      aud_recent: { field: "fields.lastOrder", op: "withinLast", value: "P30D" },
      aud_lapsed: { field: "fields.lastOrder", op: "notWithinLast", value: "P30D" },
      aud_new: { field: "createdAt", op: "withinLast", value: "PT1H" },
      aud_follows: {
        all: [
          { field: "audience", op: "in", value: "aud_recent" },
          { field: "id", op: "ne", value: "future" },
        ],
      },
    };
    const types = { lastOrder: "date" };
    const expected = (id: string): string[] => {
      const rule = rules[id] as Filter;
      const inAudience = (named: string, m: PlainMember) => expected(named).includes(m.id);
      return [...plain.values()]
        .filter((m) => referenceMatches(rule, m, { types, now, inAudience }))
        .map((m) => m.id)
        .sort();
    };
    for (const [id, filter] of Object.entries(rules)) {
      await audienceRepo.create(store.db, { workspaceId: ws, id, name: id });
      await membership.workspaceWrite(ws, { memberWrites: true }, async (w) => {
        await w.locks.writable(id);
        await w.setRule(id, filter);
      });
    }
    const members = async (id: string) => {
      const rows = await store.db.$queryRaw<{ id: string }[]>`
        SELECT m.id FROM members AS m JOIN membership_chunks AS t ON t.workspace_id = m.workspace_id
          AND t.audience_id = ${id} AND t.kind = 'member' AND t.chunk = m.seq >> 13
        WHERE m.workspace_id = ${ws} AND ${storedHas("t", Prisma.sql`m.seq & 8191`)}`;
      return rows.map((r) => r.id).sort();
    };
    const check = async (when: string) => {
      for (const id of Object.keys(rules)) expect(await members(id), `${id} ${when}`).toEqual(expected(id));
    };
    await check("at first");

    // Each step: the changes a tick reports are exactly the differences of the expected members.
    const moved = new Set<string>();
    for (const step of [HOUR / 2, HOUR, 0.5 * DAY, 0.25 * DAY, DAY, 5 * DAY, 25 * DAY, 400 * DAY]) {
      const before = Object.fromEntries(Object.keys(rules).map((id) => [id, expected(id)]));
      now += step;
      seen.length = 0;
      await membership.followClock(ws);
      await check(`after ${(now - t0) / HOUR} h`);
      const wanted = Object.keys(rules).flatMap((id) => {
        const after = expected(id);
        const entered = after.filter((m) => !before[id]?.includes(m));
        const left = (before[id] ?? []).filter((m) => !after.includes(m));
        if (entered.length + left.length === 0) return [];
        return [{ audienceId: id, reason: id === "aud_follows" ? "dependency" : "time", entered, left }];
      });
      const sort = (list: typeof seen) =>
        list
          .map((c) => ({ ...c, entered: [...c.entered].sort(), left: [...c.left].sort() }))
          .sort((a, b) => (a.audienceId < b.audienceId ? -1 : 1));
      expect(sort(seen), `changes after ${(now - t0) / HOUR} h`).toEqual(sort(wanted));
      for (const change of seen) moved.add(change.audienceId);
    }
    // Every audience moved at some step: the steps cross every edge.
    expect([...moved].sort()).toEqual(Object.keys(rules).sort());
  });

  it("keep member_dates equal to the date fields' values through every write", async () => {
    const wsDates = "ws_member_dates";
    await workspaceRepo.create(store.db, { id: wsDates, name: wsDates });
    const rows = async () =>
      (
        await store.db.$queryRaw<{ key: string; seq: number; at: Date }[]>`
          SELECT key, seq, at FROM member_dates WHERE workspace_id = ${wsDates} ORDER BY key, seq`
      ).map((r) => `${r.key} ${r.seq} ${r.at.toISOString()}`);
    const data = (fields: Record<string, string>) => ({ email: null, fields, alternativeEmails: [] });
    await store.transaction(async (tx) => {
      await memberRepo.insert(tx, wsDates, [{ id: "a", data: data({ d: "2026-01-31", e: "2026-02-01" }) }], []);
      await fieldTypeRepo.declare(tx, wsDates, "d", "date");
    });
    expect(await rows()).toEqual(["d 0 2026-01-31T00:00:00.000Z"]);
    await store.transaction(async (tx) => {
      await memberRepo.insert(tx, wsDates, [{ id: "b", data: data({ d: "2026-03-01T10:00:00+02:00" }) }], []);
      await memberRepo.updateData(tx, wsDates, [{ id: "a", data: data({ d: "", e: "2026-02-01" }) }]);
    });
    expect(await rows()).toEqual(["d 1 2026-03-01T08:00:00.000Z"]);
    await store.transaction(async (tx) => {
      await fieldTypeRepo.declare(tx, wsDates, "e", "date");
      await memberRepo.updateData(tx, wsDates, [{ id: "b", data: data({ d: "2026-04-01", e: "2026-05-01" }) }]);
    });
    expect(await rows()).toEqual([
      "d 1 2026-04-01T00:00:00.000Z",
      "e 0 2026-02-01T00:00:00.000Z",
      "e 1 2026-05-01T00:00:00.000Z",
    ]);
    await store.transaction(async (tx) => {
      await fieldTypeRepo.remove(tx, wsDates, "e");
      await memberRepo.delete(tx, wsDates, ["b"]);
    });
    expect(await rows()).toEqual([]);
  });
});
