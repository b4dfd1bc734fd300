// Scenario: tenant isolation. A victim workspace runs a steady loop of cheap requests while a
// noisy key of another workspace runs, one after another, each reproduction of the issue "One key
// cannot freeze everyone" for a bounded time (isolation-noise.ts). Each row is the victim's p50
// and p99 during one reproduction, beside the victim alone, with what the noisy requests answered
// (status, code, time) in its note: a 4xx is as good an outcome as a 200, and every figure is
// reported, never asserted. Every loop is bounded in count and time; every request has a timeout.
import { type Client, createClient } from "../http.ts";
import { summarize } from "../stats.ts";
import { attempt, type Noisy, reproductions, type Victim } from "./isolation-noise.ts";
import { range } from "./member-ids.ts";
import { thousands } from "./result-rows.ts";
import { type Context, checkTime, ws } from "./scenario-context.ts";

/** The victim's requests each give up after this long (and count as errors). */
const VICTIM_TIMEOUT_MS = 10_000;
/** At most this many victim requests per reproduction, however quick they are. */
const VICTIM_MAX_REQUESTS = 100_000;
const VICTIM_MEMBERS = 1_000;

/** The victim's loop of cheap requests, until `stopped()` (or its count bound): their times and errors. */
async function victimLoop(ctx: Context, victim: Victim, stopped: () => boolean) {
  const base = ws(ctx, victim.id);
  const requests: [string, string, unknown?][] = [
    ["GET", `${base}/audiences/${victim.audienceId}`],
    ["GET", `${base}/audiences/${victim.audienceId}/members?limit=100`],
    ["POST", `${base}/audiences/preview`, { filter: { field: "id", op: "eq", value: "v0000001" }, limit: 1 }],
  ];
  const ms: number[] = [];
  let errors = 0;
  for (let i = 0; i < VICTIM_MAX_REQUESTS && !stopped(); i++) {
    const [method, path, body] = requests[i % requests.length] as [string, string, unknown?];
    const outcome = await attempt(victim.api, method, path, body);
    ms.push(outcome.ms);
    if (outcome.status < 200 || outcome.status >= 300) errors++;
  }
  return { ms, errors };
}

/**
 * Runs `noisy` while the victim loops, and the victim for as long: the victim's latencies and
 * what the noisy side reports. The noisy side bounds itself (isolation-noise.ts).
 */
async function during(ctx: Context, victim: Victim, noisy: () => Promise<string>) {
  let done = false;
  const loop = victimLoop(ctx, victim, () => done);
  let note: string;
  try {
    note = await noisy();
  } finally {
    done = true;
  }
  return { note, ...(await loop) };
}

async function workspace(ctx: Context, name: string) {
  const { body } = await ctx.admin.call<{ id: string }>("POST", "/v0/workspaces", { name }, 201);
  const keyPath = `/v0/workspaces/${body.id}/api-keys`;
  const keys: string[] = [];
  for (const purpose of ["main", "export 1", "export 2"]) {
    keys.push((await ctx.admin.call<{ key: string }>("POST", keyPath, { name: purpose }, 201)).body.key);
  }
  return { id: body.id, keys };
}

/** The noisy workspace's members: e-mail, a plan of six, a company, and a date `seen` within 100 days. */
async function seedNoisy(ctx: Context, api: Client, workspaceId: string, members: number): Promise<void> {
  await api.call("PUT", `${ws(ctx, workspaceId)}/fields/seen`, { type: "date" }, 200);
  const day = 86_400_000;
  for (let from = 0; from < members; from += ctx.opts.batch) {
    checkTime(ctx);
    const batch = range(from, Math.min(members, from + ctx.opts.batch), (n) => ({
      id: `n${String(n).padStart(7, "0")}`,
      email: `n${n}@noisy.example`,
      fields: {
        plan: `p${n % 6}`,
        company: `Company ${n % 1_000}`,
        seen: new Date(Date.now() - (n % 100) * day).toISOString().slice(0, 10),
      },
    }));
    await api.call("POST", `${ws(ctx, workspaceId)}/members`, { members: batch }, 200);
  }
}

export async function tenantIsolation(ctx: Context): Promise<void> {
  const { quick, loadSeconds } = ctx.opts;
  const members = Math.min(ctx.opts.size, quick ? 2_000 : 200_000);
  const noisyWs = await workspace(ctx, "Bench isolation: noisy");
  const victimWs = await workspace(ctx, "Bench isolation: victim");
  // The noisy side waits longer than the victim for an answer: its requests are the heavy ones.
  const noisy: Noisy = {
    ctx,
    workspaceId: noisyWs.id,
    members,
    api: createClient(ctx.service.baseUrl, noisyWs.keys[0] as string, {
      timeoutMs: Math.max(30_000, loadSeconds * 3_000),
    }),
    exportKeys: noisyWs.keys.slice(1),
    seconds: loadSeconds,
    quick,
  };
  const victimApi = createClient(ctx.service.baseUrl, victimWs.keys[0] as string, { timeoutMs: VICTIM_TIMEOUT_MS });
  try {
    ctx.log(`isolation: seeding ${thousands(members)} noisy members and ${VICTIM_MEMBERS} victim members`);
    await seedNoisy(ctx, noisy.api, noisyWs.id, members);
    const victimMembers = range(0, VICTIM_MEMBERS, (n) => ({ id: `v${String(n).padStart(7, "0")}` }));
    await victimApi.call("POST", `${ws(ctx, victimWs.id)}/members`, { members: victimMembers }, 200);
    const { body: audience } = await victimApi.call<{ id: string }>(
      "POST",
      `${ws(ctx, victimWs.id)}/audiences`,
      { name: "Victim" },
      201,
    );
    await victimApi.call(
      "POST",
      `${ws(ctx, victimWs.id)}/audiences/${audience.id}/members`,
      { memberIds: victimMembers.map((m) => m.id) },
      200,
    );
    const victim = { id: victimWs.id, audienceId: audience.id, api: victimApi };

    ctx.log(`isolation: the victim alone for ${loadSeconds} s`);
    const aloneUntil = Date.now() + loadSeconds * 1_000;
    const alone = summarize((await victimLoop(ctx, victim, () => Date.now() > aloneUntil)).ms);
    for (const reproduction of reproductions) {
      checkTime(ctx);
      ctx.log(`isolation: ${reproduction.what}`);
      const ready = await reproduction.setUp(noisy);
      const { note, ms, errors } = await during(ctx, victim, () => reproduction.run(noisy, ready, victim));
      const seen = summarize(ms);
      ctx.rows.push({
        metric: `isolation_${reproduction.name}`,
        label: `victim's cheap requests (p99 ${seen.p99.toFixed(1)} ms) while the noisy key ${reproduction.what}`,
        unit: "ms",
        value: seen.median,
        baseline: alone.median,
        baselineLabel: `the victim alone, p50; p99 ${alone.p99.toFixed(1)} ms`,
        ratio: seen.median / alone.median,
        target: "tenant_isolation",
        medianMs: seen.median,
        p99Ms: seen.p99,
        baselineMedianMs: alone.median,
        baselineP99Ms: alone.p99,
        errors,
        note: `${thousands(ms.length)} victim requests, ${errors} failed or unanswered within ${VICTIM_TIMEOUT_MS / 1_000} s; noisy: ${note}`,
      });
    }
  } finally {
    noisy.api.close();
    victimApi.close();
  }
}
