import { type MembershipChange, sizeOf } from "../../../src/features/membership/member-set.ts";
import type { Store } from "../../../src/platform/db/database.ts";
import { serviceRecords, storeMembership } from "../../../test/support/store-membership.ts";
import type { Client } from "../http.ts";
import { type RawDb, timed } from "../raw.ts";
import { asInput, DAY, type Entry, rawInsert } from "./activity-data.ts";
import { latencyRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, eventsPublished } from "./scenario-context.ts";

const SECOND = 1_000;
const HOUR = 3_600 * SECOND;
/** The service's default ACTIVITY_RETENTION_DAYS: the edge the clock also watches. */
const RETENTION_DAYS = 400;
/** The tick's windows (order.placed withinLast, in days): 30 is the rule rows' three audiences'. */
export const CLOCK_WINDOWS = [10, 20, 40, 50, 60, 70, 80];
/** Members crossing each window's edge in a crossing tick: 1,000 in all (300 at P30D's three audiences). */
const CROSSERS = [...CLOCK_WINDOWS.map((days) => ({ days, members: 100 })), { days: 30, members: 300 }];

export interface ClockSetting {
  workspaceId: string;
  api: Client;
  types: Map<string, number>;
  /** The base day: the stored activities lie on the midnights before it, the ticks on its morning. */
  base: Date;
  /** The window audiences (CLOCK_WINDOWS's and the rule rows' P30D), 10 in all. */
  audiences: number;
}

/** The 20 ranges the tick from `before` to `now` reads: each audience's window edge and the retention's. */
function rangesOf(before: number, now: number, typeId: number) {
  const windows = [...CLOCK_WINDOWS, 30, 30, 30];
  return windows.flatMap((days) =>
    [days, RETENTION_DAYS].map((d) => ({ typeId, from: before - d * DAY, to: now - d * DAY })),
  );
}

/**
 * The raw baseline: those ranges as one SELECT of 20 branches, each one range of the index by
 * workspace, type and time in the partitions its bounds leave. (Joined to the ranges as rows, the
 * planner hashed every activity of the workspace against them: 350 ms at 1,000,000.)
 */
const rawRanges = (db: RawDb, workspaceId: string, ranges: ReturnType<typeof rangesOf>) =>
  db.query(
    ranges
      .map(
        (_, i) => `SELECT a.member_seq FROM activities AS a WHERE a.workspace_id = $1 AND a.type_id = $2
          AND a.occurred_at >= $${3 + 2 * i}::timestamptz AND a.occurred_at < $${4 + 2 * i}::timestamptz`,
      )
      .join(" UNION ALL "),
    [
      workspaceId,
      ranges[0]?.typeId,
      ...ranges.flatMap((r) => [new Date(r.from).toISOString(), new Date(r.to).toISOString()]),
    ],
  );

const moved = (changes: MembershipChange[]) => changes.reduce((sum, c) => sum + sizeOf(c.entered) + sizeOf(c.left), 0);

/**
 * The clock tick of 10 activity-window audiences (order.placed withinLast P10D … P80D), run in
 * this process on the service's database with a clock the scenario sets, as clock-tick.ts runs
 * it (PostgreSQL only). The stored activities lie on midnights: ticks 60 s apart within the base
 * day's morning move no window over any, and nobody crosses. Before each crossing tick, 1,000
 * members get an order just inside a window's edge, which the tick moves past it.
 */
export async function activityClock(ctx: Context, store: Store, setting: ClockSetting): Promise<void> {
  const { workspaceId, api, types } = setting;
  const typeId = types.get("order.placed") as number;
  const idleTicks = ctx.opts.quick ? 5 : 15;
  const crossingTicks = ctx.opts.quick ? 2 : 5;
  let now = Date.now();
  const membership = storeMembership(store, {
    clock: () => now,
    activityRetentionDays: RETENTION_DAYS,
    // The server's event workers publish the outbox; this process has none to wake.
    records: serviceRecords,
  });
  const tick = async (at: number) => {
    const rawMs = await timed(() => rawRanges(ctx.raw, workspaceId, rangesOf(now, at, typeId)));
    now = at;
    let changes: MembershipChange[] = [];
    const ms = await timed(async () => {
      changes = await membership.followClock(workspaceId);
    });
    return { ms, rawMs, moved: moved(changes) };
  };

  // After the server's clock, whose worker then leaves these audiences alone (evaluated later).
  const day = setting.base.getTime();
  ctx.log("activity clock: catching up with the server's evaluation, then ticks 60 s apart");
  await tick(day + 6 * HOUR);
  await eventsPublished(ctx, workspaceId, api);
  const idle = { ms: [] as number[], raw: [] as number[] };
  for (let i = 0; i < idleTicks; i++) {
    checkTime(ctx);
    const t = await tick(now + 60 * SECOND);
    if (t.moved !== 0) throw new Error(`activity clock: ${t.moved} members moved in a tick where nobody crosses`);
    idle.ms.push(t.ms);
    idle.raw.push(t.rawMs);
  }
  const crossed = { ms: [] as number[], raw: [] as number[], moved: [] as number[] };
  for (let round = 0; round < crossingTicks; round++) {
    checkTime(ctx);
    ctx.log(`activity clock: crossing ${round + 1}/${crossingTicks}`);
    // 1,000 members (2 + 1,000 × round …), each with one order 30 s inside a window's edge.
    let seq = 2 + 1_000 * round;
    const entries: Entry[] = CROSSERS.flatMap(({ days, members }) =>
      Array.from({ length: members }, () => ({
        id: `cross${seq}`,
        seq: seq++,
        type: "order.placed",
        occurredAt: new Date(now - days * DAY + 30 * SECOND).toISOString(),
        properties: { amount: 10 },
      })),
    );
    await rawInsert(ctx.raw, workspaceId, types, entries);
    await api.call("POST", `/v0/workspaces/${workspaceId}/activities`, { activities: entries.map(asInput) }, 200);
    await eventsPublished(ctx, workspaceId, api);
    const t = await tick(now + 60 * SECOND);
    crossed.ms.push(t.ms);
    crossed.raw.push(t.rawMs);
    crossed.moved.push(t.moved);
  }

  const audiences = `${setting.audiences} activity-window audiences (order.placed withinLast P10D … P80D)`;
  const baseline = "the tick's 20 index ranges on activities, one SELECT,";
  ctx.rows.push(
    latencyRow(idle.ms, idle.raw, {
      metric: "activity_clock_idle",
      target: "activity_clock_idle",
      label: (p99) =>
        `a clock tick 60 s on, nobody crossing, ${audiences}: p50 of ${idleTicks} (p99 ${p99.toFixed(1)} ms)`,
      baseline,
    }),
  );
  const memberships = `${thousands(Math.min(...crossed.moved))}–${thousands(Math.max(...crossed.moved))}`;
  ctx.rows.push(
    latencyRow(crossed.ms, crossed.raw, {
      metric: "activity_clock_crossing",
      target: "activity_clock_crossing",
      label: (p99) =>
        `a clock tick 60 s on, 1,000 members crossing (${memberships} memberships moved), ${audiences}: p50 of ${crossingTicks} (p99 ${p99.toFixed(1)} ms)`,
      baseline,
    }),
  );
}
