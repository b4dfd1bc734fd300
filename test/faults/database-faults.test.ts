import { writeFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  killProcessGroup,
  listAudienceMembers,
  type ServerProcess,
  send as sendTo,
  startServerProcess,
} from "../reliability/server-process.ts";
import { createOwnCluster, type OwnCluster } from "./own-cluster.ts";

/**
 * Fault injection: the real server process on a PostgreSQL cluster of its own, which is stopped,
 * restarted, frozen (SIGSTOP, like a network partition) and thawed while clients write and read.
 * Only 2xx and 503 problem documents may come back (never 401 or 500), none later than the
 * configured timeouts allow, service must resume within 2 s of the database's return, and every
 * acknowledged write must be there afterwards.
 */
const TIMEOUTS = { connect: 2_000, read: 2_000, statement: 3_000 };
// The longest any answer may take: a connection's wait plus a write statement's limit and its
// client-side backstop, plus scheduling slack on a shared 2-core machine.
const ANSWER_BOUND_MS = TIMEOUTS.connect + TIMEOUTS.statement + 1_000 + 2_000;
const RECOVERY_BOUND_MS = 2_000;

interface Sent {
  kind: "write" | "read" | "ready";
  phase: string;
  start: number;
  end: number;
  status: number;
  requestId: string | null;
}

let cluster: OwnCluster | undefined;
let server: ServerProcess | undefined;
beforeAll(async () => {
  if (!process.env.TEST_DATABASE_URL) return;
  cluster = await createOwnCluster();
  server = await startServerProcess({
    DATABASE_URL: cluster.url(),
    DATABASE_CONNECT_TIMEOUT_MS: String(TIMEOUTS.connect),
    DATABASE_READ_TIMEOUT_MS: String(TIMEOUTS.read),
    DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUTS.statement),
  });
});
afterAll(async () => {
  if (server) await killProcessGroup(server);
  cluster?.drop();
});

const send = (method: string, path: string, apiKey: string | undefined, body?: unknown, headers = {}) =>
  sendTo(server as ServerProcess, apiKey, method, path, body, headers);

const logOf = (output: string, requestId: string | null) =>
  output.split("\n").filter((line) => requestId && line.includes(requestId));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(process.env.TEST_DATABASE_URL)("PostgreSQL stopped, frozen and restarted under load", () => {
  it("answers only 2xx or 503, within the timeouts, recovers within 2 s and loses no acknowledged write", async () => {
    const { workspaceId, apiKey } = server?.firstStart ?? { workspaceId: "", apiKey: "" };
    const ws = `/v0/workspaces/${workspaceId}`;
    const audience = (await send("POST", `${ws}/audiences`, apiKey, { name: "Fault ledger" })).body.id as string;
    const log: Sent[] = [];
    const acknowledged = new Set<string>();
    let phase = "before";
    let running = true;
    let next = 0;

    const record = async (kind: Sent["kind"], request: () => ReturnType<typeof send>) => {
      const entry = { kind, phase, start: Date.now() };
      const answer = await request();
      log.push({ ...entry, end: Date.now(), status: answer.status, requestId: answer.headers.get("x-request-id") });
      return answer;
    };
    const writer = async () => {
      while (running) {
        const id = `ledger_${next++}`;
        const answer = await record("write", () =>
          send("POST", `${ws}/audiences/${audience}/members`, apiKey, { memberIds: [id] }),
        );
        if (answer.status === 200) acknowledged.add(id);
        else await sleep(50);
      }
    };
    const reader = async () => {
      for (let i = 0; running; i++) {
        const path = i % 2 ? `${ws}/audiences/${audience}` : `${ws}/audiences/${audience}/members?limit=5`;
        const answer = await record("read", () => send("GET", path, apiKey));
        if (answer.status !== 200) await sleep(50);
      }
    };
    const prober = async () => {
      while (running) {
        await record("ready", () => send("GET", "/readyz", undefined));
        await sleep(200);
      }
    };
    const clients = [writer(), writer(), writer(), reader(), reader(), prober()];
    const returns: Record<string, number> = {};
    const db = cluster as OwnCluster;

    await sleep(2_000);
    phase = "stopping"; // pg_ctlcluster's fast shutdown: open transactions are cut off
    await db.stop();
    phase = "stopped";
    await sleep(6_000); // longer than a verified key is cached, so keys are checked against the database
    phase = "starting"; // PostgreSQL accepts connections before pg_ctlcluster returns
    await db.start();
    returns.restarted = Date.now();
    phase = "restarted";
    await sleep(4_000);
    const freezing = Date.now();
    phase = "frozen";
    await db.freeze();
    await sleep(8_000);
    await db.thaw();
    returns.thawed = Date.now();
    phase = "thawed";
    await sleep(4_000);
    const ended = Date.now();
    running = false;
    await Promise.all(clients);

    // The ledger: every acknowledged write is in the audience.
    const { members } = await listAudienceMembers(
      { baseUrl: server?.baseUrl ?? "" },
      apiKey,
      `${ws}/audiences/${audience}/members`,
    );
    const lost = [...acknowledged].filter((id) => !members.has(id));

    // phase → kind of request → status → count
    const statusCounts: Record<string, Record<string, Record<number, number>>> = {};
    for (const { phase: p, kind, status } of log) {
      statusCounts[p] ??= {};
      const byKind = statusCounts[p] as Record<string, Record<number, number>>;
      byKind[kind] ??= {};
      const counts = byKind[kind] as Record<number, number>;
      counts[status] = (counts[status] ?? 0) + 1;
    }
    const count = (p: string, status: number) =>
      Object.values(statusCounts[p] ?? {}).reduce((sum, counts) => sum + (counts[status] ?? 0), 0);
    const recovery = Object.fromEntries(
      Object.entries(returns).map(([name, back]) => {
        const firstOk = log
          .filter((s) => s.kind !== "ready" && s.status < 300 && s.end >= back)
          .sort((a, b) => a.end - b.end)[0];
        return [name, firstOk ? firstOk.end - back : Number.POSITIVE_INFINITY];
      }),
    );
    const longest = Math.max(...log.map((s) => s.end - s.start));
    const longestReady = Math.max(...log.filter((s) => s.kind === "ready").map((s) => s.end - s.start));
    const report = {
      requests: log.length,
      acknowledgedWrites: acknowledged.size,
      statusCounts,
      longestAnswerMs: longest,
      longestReadyzMs: longestReady,
      recoveryMs: recovery,
      lostAcknowledgedWrites: lost.length,
    };
    console.log(`fault-injection report: ${JSON.stringify(report)}`);
    if (process.env.FAULT_REPORT) writeFileSync(process.env.FAULT_REPORT, JSON.stringify(report, null, 2));

    expect(new Set(log.map((s) => s.status))).toEqual(
      new Set([200, 503].filter((s) => log.some((l) => l.status === s))),
    );
    expect(log.filter((s) => s.status !== 200 && s.status !== 503)).toEqual([]);
    expect(count("stopped", 503)).toBeGreaterThan(0);
    expect(count("frozen", 503)).toBeGreaterThan(0);
    expect(longest).toBeLessThan(ANSWER_BOUND_MS);
    expect(longestReady).toBeLessThan(1_500);
    expect(recovery.restarted).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
    expect(recovery.thawed).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
    // Once back, it stays back: nothing sent a little after a return, and answered before the
    // next fault began, fails.
    const nextFault: Record<string, number> = { restarted: freezing, thawed: ended };
    const late = log.filter(
      (s) =>
        s.kind !== "ready" &&
        s.start > (returns[s.phase] ?? Number.POSITIVE_INFINITY) + RECOVERY_BOUND_MS &&
        s.end < (nextFault[s.phase] ?? 0),
    );
    const output = server?.output() ?? "";
    const lateFailures = late
      .filter((s) => s.status !== 200)
      .map((s) => ({
        phase: s.phase,
        kind: s.kind,
        status: s.status,
        sinceReturnMs: s.start - (returns[s.phase] ?? 0),
        tookMs: s.end - s.start,
        log: logOf(output, s.requestId).map((line) => line.slice(0, 300)),
      }));
    expect(lateFailures, cluster?.log().split("\n").slice(-40).join("\n")).toEqual([]);
    expect(lost).toEqual([]);

    // Each failed request is logged once, with its request id (and the SQLSTATE when PostgreSQL gave one).
    const failed = log.filter((s) => s.status === 503 && s.kind !== "ready");
    for (const { requestId } of failed.slice(0, 50)) {
      expect(output.split(`"reqId":"${requestId}"`).length - 1, `log lines of ${requestId}`).toBe(1);
    }
    expect(output).toMatch(/"sqlState":"57P0\d"/);
  });

  it("releases the Idempotency-Key of a POST the database dropped, so the retry executes", async () => {
    const { workspaceId, apiKey } = server?.firstStart ?? { workspaceId: "", apiKey: "" };
    const ws = `/v0/workspaces/${workspaceId}`;
    const audience = (await send("POST", `${ws}/audiences`, apiKey, { name: "Idempotent retry" })).body.id as string;
    const body = { memberIds: ["retry_1", "retry_2", "retry_3"] };
    const key = { "idempotency-key": `fault-${Date.now()}` };
    const db = cluster as OwnCluster;

    // Hold the workspace's member lock, so the POST claims its key and then waits in its transaction.
    const holder = new pg.Client({ connectionString: db.url() });
    holder.on("error", () => {});
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM workspaces WHERE workspace_id = $1 FOR UPDATE", [workspaceId]);
    const first = send("POST", `${ws}/audiences/${audience}/members`, apiKey, body, key);
    for (let waited = 0; ; waited += 50) {
      const { rows } = await holder.query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted");
      if (rows[0].n > 0) break;
      if (waited > 20_000) throw new Error("the POST never waited for the member lock");
      await sleep(50);
    }
    await db.stop();
    const dropped = await first;
    expect(dropped.status).toBe(503);
    expect(dropped.body).toMatchObject({ code: "service_unavailable", status: 503 });
    await db.start();

    const retry = await send("POST", `${ws}/audiences/${audience}/members`, apiKey, body, key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(retry.body).toMatchObject({ added: 3 });
    const replay = await send("POST", `${ws}/audiences/${audience}/members`, apiKey, body, key);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(retry.body);
  });
});
