import { type MembershipChange, sizeOf } from "../../../src/features/membership/member-set.ts";
import type { Store } from "../../../src/platform/db/database.ts";
import { serviceRecords, storeMembership } from "../../../test/support/store-membership.ts";
import { type RawDb, timed } from "../raw.ts";
import { latencyRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, eventsPublished, type StoreWriter } from "./scenario-context.ts";

const SECOND = 1_000;
const HOUR = 3_600 * SECOND;
const DAY = 24 * HOUR;
/** The values of lastOrder lie on the DAYS days before the base day. */
const DAYS = 400;
/** The audiences' windows, in days: withinLast P10D … P100D. */
const WINDOWS = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];

/**
 * Member n's lastOrder lies `1 + n mod DAYS` days before the base day. Most members' values are
 * calendar dates (midnight); one group of 400 in 25 (about 100 a day at 1,000,000 members) has a
 * time, at noon plus 0 … 100 s. So a tick within a day's first twelve hours moves no window over
 * any value, and one from 11:58 to 12:02 moves each window over its day's noon group.
 */
const AT_SQL = `($3::timestamptz - (1 + n % ${DAYS}) * interval '1 day'
  + CASE WHEN (n / ${DAYS}) % 25 = 0 THEN interval '12 hours' + (n / ${DAYS} / 25) * interval '1 second' ELSE interval '0' END)`;
const daysBefore = (n: number) => 1 + (n % DAYS);
const atNoon = (n: number) => Math.floor(n / DAYS) % 25 === 0;

/** Members 1 … count with a lastOrder (text, as every field value), written in one statement. */
async function fillMembers(db: RawDb, workspaceId: string, count: number, base: Date): Promise<void> {
  await db.query(
    `INSERT INTO members (workspace_id, id, seq, created_at, fields, folded)
     SELECT $1, 'lo' || n, n, timestamp '2026-01-01' + n * interval '1 millisecond', f,
            jsonb_build_object('id', 'lo' || n, 'email', null, 'emails', '[]'::jsonb, 'fields', f)
     FROM (SELECT n, jsonb_build_object('lastOrder', CASE WHEN (n / ${DAYS}) % 25 = 0
                    THEN to_char(${AT_SQL} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                    ELSE to_char(${AT_SQL} AT TIME ZONE 'UTC', 'YYYY-MM-DD') END) AS f
           FROM generate_series(1, $2::int) AS n) AS s`,
    [workspaceId, count, base.toISOString()],
  );
  await db.query(`UPDATE workspaces SET member_seq = $2 WHERE workspace_id = $1`, [workspaceId, count]);
}

/** The raw baseline's index: the same member_dates rows, written directly. */
const fillDates = (db: RawDb, workspaceId: string, count: number, base: Date) =>
  db.query(
    `INSERT INTO member_dates (workspace_id, key, seq, at)
     SELECT $1, 'lastOrder', n, ${AT_SQL} FROM generate_series(1, $2::int) AS n`,
    [workspaceId, count, base.toISOString()],
  );

/** The index ranges a tick from `before` to `now` reads (rule-following.ts followClock): two a window. */
const rangesOf = (before: number, now: number) =>
  WINDOWS.flatMap((days) => [
    { from: before - days * DAY, to: now - days * DAY },
    { from: before, to: now },
  ]);

/** The raw baseline: those ranges read through member_dates's index in one SELECT, the members' numbers returned. */
const rawRanges = (db: RawDb, workspaceId: string, before: number, now: number) => {
  const ranges = rangesOf(before, now);
  return db.query(
    `SELECT x.seq FROM unnest($2::timestamptz[], $3::timestamptz[]) AS r(from_at, to_at)
     CROSS JOIN LATERAL (SELECT d.seq FROM member_dates AS d
       WHERE d.workspace_id = $1 AND d.key = 'lastOrder' AND d.at BETWEEN r.from_at AND r.to_at) AS x`,
    [workspaceId, ranges.map((r) => new Date(r.from).toISOString()), ranges.map((r) => new Date(r.to).toISOString())],
  );
};

/** The members of the noon groups the crossing tick of round r moves a window over: they leave. */
function crossing(count: number, round: number): number {
  let n = 0;
  for (let i = 1; i <= count; i++) if (atNoon(i) && WINDOWS.includes(daysBefore(i) + round)) n++;
  return n;
}

const moved = (changes: MembershipChange[]) => changes.reduce((sum, c) => sum + sizeOf(c.entered) + sizeOf(c.left), 0);

/**
 * Scenario: the clock tick of relative-time rules. `size` members with a date field lastOrder
 * over 400 days, and 10 audiences with withinLast P10D … P100D. A tick is not a request: it is
 * run in this process, on the service's database (PostgreSQL: the embedded store belongs to the
 * server's process), through the membership service wired as composition.ts wires it, with a
 * clock the scenario sets. Each tick is set beside the index range reads it must make.
 */
export async function clockTick(ctx: Context, writeServiceStore: StoreWriter, store: Store): Promise<void> {
  const count = ctx.opts.size;
  const idleTicks = ctx.opts.quick ? 5 : 15;
  const crossingTicks = ctx.opts.quick ? 3 : 7;
  // Every tick's time lies after the server's own clock, whose worker then leaves these
  // audiences alone (not due), and whose evaluations the first tick here catches up with.
  const base = new Date(Math.ceil(Date.now() / DAY) * DAY + DAY);
  const { body: workspace } = await ctx.admin.call<{ id: string }>(
    "POST",
    "/v0/workspaces",
    { name: "Bench clock" },
    201,
  );
  const keyPath = `/v0/workspaces/${workspace.id}/api-keys`;
  const { body: key } = await ctx.admin.call<{ key: string }>("POST", keyPath, { name: "clock" }, 201);
  ctx.log(`clock tick: writing ${thousands(count)} members with a lastOrder, and their dates for the baseline`);
  await fillDates(ctx.raw, workspace.id, count, base);
  await writeServiceStore((db) => fillMembers(db, workspace.id, count, base));
  const api = ctx.clientFor(key.key);
  const wsPath = `/v0/workspaces/${workspace.id}`;
  // Declared after the rows exist: the declaration fills member_dates from them.
  await api.call("PUT", `${wsPath}/fields/lastOrder`, { type: "date" }, 200);
  for (const days of WINDOWS) {
    const { body: audience } = await api.call<{ id: string }>(
      "POST",
      `${wsPath}/audiences`,
      { name: `Ordered within ${days} days` },
      201,
    );
    const filter = { field: "fields.lastOrder", op: "withinLast", value: `P${days}D` };
    await api.call("PUT", `${wsPath}/audiences/${audience.id}/filter`, { filter }, 200);
  }
  await ctx.analyze();

  let now = Date.now();
  const membership = storeMembership(store, {
    clock: () => now,
    // The server's event workers publish the outbox; this process has none to wake.
    records: serviceRecords,
  });
  /** A tick at `at`, beside the raw reads of its ranges (the raw first, as elsewhere), timed. */
  const tick = async (at: number) => {
    const rawMs = await timed(() => rawRanges(ctx.raw, workspace.id, now, at));
    now = at;
    let changes: MembershipChange[] = [];
    const ms = await timed(async () => {
      changes = await membership.followClock(workspace.id);
    });
    return { ms, rawMs, moved: moved(changes) };
  };

  ctx.log("clock tick: catching up with the server's evaluation, then ticks 60 s apart");
  await tick(base.getTime() + HOUR);
  // A measured tick starts once the server's relay has published what came before it (the rules'
  // first evaluations, the unmeasured ticks): otherwise it shares the machine's two cores with
  // that publishing, and measures the relay as much as itself.
  await eventsPublished(ctx, workspace.id, api);
  const idle = { ms: [] as number[], raw: [] as number[] };
  for (let i = 0; i < idleTicks; i++) {
    checkTime(ctx);
    const t = await tick(now + 60 * SECOND);
    if (t.moved !== 0) throw new Error(`clock tick: ${t.moved} members moved in a tick where nobody crosses`);
    idle.ms.push(t.ms);
    idle.raw.push(t.rawMs);
  }
  const crossed = { ms: [] as number[], raw: [] as number[], members: [] as number[] };
  for (let round = 1; round <= crossingTicks; round++) {
    checkTime(ctx);
    ctx.log(`clock tick: crossing ${round}/${crossingTicks}`);
    const noon = base.getTime() + round * DAY + 12 * HOUR;
    await tick(noon - 2 * 60 * SECOND); // the rest of the day since the last tick, not measured
    await eventsPublished(ctx, workspace.id, api);
    const t = await tick(noon + 2 * 60 * SECOND);
    const expected = crossing(count, round);
    if (t.moved !== expected) throw new Error(`clock tick: expected ${expected} members to leave, ${t.moved} moved`);
    crossed.ms.push(t.ms);
    crossed.raw.push(t.rawMs);
    crossed.members.push(t.moved);
  }

  const audiences = `${WINDOWS.length} withinLast audiences (P10D … P100D) over ${thousands(count)} members`;
  const baseline = "the tick's 20 index ranges on member_dates, one SELECT,";
  ctx.rows.push(
    latencyRow(idle.ms, idle.raw, {
      metric: "clock_tick_idle",
      target: "clock_tick_idle",
      label: (p99) =>
        `a clock tick 60 s on, nobody crossing, ${audiences}: p50 of ${idleTicks} (p99 ${p99.toFixed(1)} ms)`,
      baseline,
    }),
  );
  const members =
    Math.min(...crossed.members) === Math.max(...crossed.members)
      ? thousands(crossed.members[0] ?? 0)
      : `${thousands(Math.min(...crossed.members))}–${thousands(Math.max(...crossed.members))}`;
  ctx.rows.push(
    latencyRow(crossed.ms, crossed.raw, {
      metric: "clock_tick_crossing",
      target: "clock_tick_crossing",
      label: (p99) =>
        `a clock tick 4 min on, ${members} members leaving, ${audiences}: p50 of ${crossingTicks} (p99 ${p99.toFixed(1)} ms)`,
      baseline,
    }),
  );
}
