import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createOwnCluster, type OwnCluster } from "../../../test/faults/own-cluster.ts";
import { type Client, createClient } from "../http.ts";
import { type ServiceProcess, startService } from "../processes.ts";
import { summarize } from "../stats.ts";
import { range } from "./member-ids.ts";
import { latencyRow, thousands } from "./result-rows.ts";
import { type Context, checkTime } from "./scenario-context.ts";

const MEMBERS = 20_000;
const WORKSPACES = 10;
const MEMBERS_EACH = 2_000;
const CLIENTS = 20;
const ADD = 10;

interface Server {
  process: ServiceProcess;
  api: Client;
  /** Clients with other keys, closed with the server. */
  clients: Client[];
  /** The replicas it reads from (DATABASE_READ_URLS). */
  readUrls: string | undefined;
}

/**
 * Scenario (PostgreSQL, not --quick): reads on a streaming replica. It makes a primary and a
 * replica of its own (pg_basebackup -R, as test/faults/replicas.test.ts does) and drops them after.
 * Two server processes on the primary, one reading from the replica: a page of 100 members (with
 * totalCount, of an audience of 20,000) and getAudience, each sample sent to both alternately,
 * without a token and right after a write with its fresh token; then the mixed load of the `mixed`
 * scenario on two server processes, primary-only and then both reading from the replica, with
 * the primary's CPU time per request (every process of its cluster).
 */
export async function replicaReads(ctx: Context): Promise<void> {
  const adminToken = randomBytes(24).toString("hex");
  const servers: Server[] = [];
  let primary: OwnCluster | undefined;
  let replica: OwnCluster | undefined;
  const start = async (readUrls: string | undefined, replicaWaitMs?: number): Promise<Server> => {
    const process = await startService({
      databaseUrl: primary?.url(),
      readUrls,
      replicaWaitMs,
      adminToken,
      rateLimitPerMinute: 0,
      bodyLimit: 16 * 1_048_576,
    });
    const server: Server = { process, api: createClient(process.baseUrl, adminToken), clients: [], readUrls };
    servers.push(server);
    return server;
  };
  const stop = async (server: Server) => {
    for (const client of [server.api, ...server.clients]) client.close();
    await server.process.stop();
    servers.splice(servers.indexOf(server), 1);
  };
  try {
    ctx.log("replicas: a primary and a streaming replica of their own");
    primary = await createOwnCluster();
    replica = await createOwnCluster({ replicaOf: primary });
    const alone = await start(undefined);
    const replicated = await start(replica.url());
    const waitless = await start(replica.url(), 0);
    await latencies(ctx, alone, replicated, waitless);
    await stop(waitless);
    await mixed(ctx, primary, { alone, replicated, start, stop });
  } finally {
    for (const server of [...servers]) await stop(server).catch(() => {});
    try {
      replica?.drop();
    } finally {
      primary?.drop();
    }
  }
}

/** A workspace and key made through `server`, and a client of each server with that key. */
async function tenant(server: Server, others: Server[], name: string) {
  const { body: workspace } = await server.api.call<{ id: string }>("POST", "/v0/workspaces", { name }, 201);
  const path = `/v0/workspaces/${workspace.id}`;
  const { body: key } = await server.api.call<{ key: string }>("POST", `${path}/api-keys`, { name }, 201);
  const clients = [server, ...others].map((s) => {
    const client = createClient(s.process.baseUrl, key.key);
    s.clients.push(client);
    return client;
  });
  return { path, clients };
}

async function latencies(ctx: Context, alone: Server, replicated: Server, waitless: Server): Promise<void> {
  const { path, clients } = await tenant(alone, [replicated, waitless], "Replica reads");
  const [onPrimary, onReplica, noWait] = clients as [Client, Client, Client];
  const { body: audience } = await onPrimary.call<{ id: string }>("POST", `${path}/audiences`, { name: "Read" }, 201);
  const { body: scratch } = await onPrimary.call<{ id: string }>("POST", `${path}/audiences`, { name: "Written" }, 201);
  ctx.log(`replicas: ${thousands(MEMBERS)} members into one audience`);
  for (let from = 0; from < MEMBERS; from += 5_000) {
    const memberIds = range(from, Math.min(MEMBERS, from + 5_000), (n) => `r${n}`);
    await onPrimary.call("POST", `${path}/audiences/${audience.id}/members`, { memberIds }, 200);
  }
  const reads = {
    page: `${path}/audiences/${audience.id}/members?limit=100`,
    getAudience: `${path}/audiences/${audience.id}`,
  };
  const samples = ctx.opts.pageSamples;
  let written = 0;
  const write = async (client: Client) => {
    const answer = await client.call(
      "POST",
      `${path}/audiences/${scratch.id}/members`,
      { memberIds: [`w${written++}`] },
      200,
    );
    return String(answer.headers["consistency-token"] ?? "");
  };
  for (const [name, read] of Object.entries(reads)) {
    ctx.log(`replicas: ${samples} × ${name} on each, without a token, then after a write with its token`);
    const plain = { primary: [] as number[], replica: [] as number[] };
    const fresh = { primary: [] as number[], replica: [] as number[] };
    const again = { primary: [] as number[], replica: [] as number[] };
    const unwaited: number[] = [];
    for (let i = 0; i < samples + 20; i++) {
      checkTime(ctx);
      // Alternately first, so that neither gains from the other's warm caches.
      const order: ["primary" | "replica", Client][] =
        i % 2
          ? [
              ["primary", onPrimary],
              ["replica", onReplica],
            ]
          : [
              ["replica", onReplica],
              ["primary", onPrimary],
            ];
      for (const [side, client] of order) {
        const answer = await client.call("GET", read, undefined, 200);
        if (i >= 20) plain[side].push(answer.ms);
      }
      for (const [side, client] of order) {
        const token = await write(client);
        if (side === "replica" && token === "") throw new Error("a write on the replicated server carried no token");
        const headers: Record<string, string> = token ? { "consistency-token": token } : {};
        const answer = await client.call("GET", read, undefined, 200, headers);
        if (i >= 20) fresh[side].push(answer.ms);
        // The same token again, as the SDK sends a client's last token with each of its reads.
        const later = await client.call("GET", read, undefined, 200, headers);
        if (i >= 20) again[side].push(later.ms);
      }
      // DATABASE_REPLICA_WAIT_MS=0: a token the replica is not known to have replayed reads the primary at once.
      const token = await write(noWait);
      const answer = await noWait.call("GET", read, undefined, 200, { "consistency-token": token });
      if (i >= 20) unwaited.push(answer.ms);
    }
    ctx.rows.push(
      latencyRow(plain.replica, plain.primary, {
        metric: `replica_${name}_no_token`,
        label: (p99) => `${name} with one replica, no token: p50 (p99 ${p99.toFixed(1)} ms)`,
        baseline: "the same on a primary-only server",
        target: "replica_read_no_token",
      }),
      latencyRow(fresh.replica, fresh.primary, {
        metric: `replica_${name}_fresh_token`,
        label: (p99) => `${name} with one replica, right after a write, its token: p50 (p99 ${p99.toFixed(1)} ms)`,
        baseline: "the same on a primary-only server",
        target: "replica_read_fresh_token",
      }),
      latencyRow(unwaited, fresh.primary, {
        metric: `replica_${name}_fresh_token_no_wait`,
        label: (p99) =>
          `${name} right after a write, its token, DATABASE_REPLICA_WAIT_MS=0: p50 (p99 ${p99.toFixed(1)} ms)`,
        baseline: "the same on a primary-only server",
      }),
      latencyRow(again.replica, again.primary, {
        metric: `replica_${name}_replayed_token`,
        label: (p99) =>
          `${name} with one replica, the same token again (replayed by then): p50 (p99 ${p99.toFixed(1)} ms)`,
        baseline: "the same on a primary-only server",
      }),
    );
  }
  const metrics = await fetch(`${replicated.process.baseUrl}/metrics`).then((r) => r.text());
  const counted = (series: string) => Number(new RegExp(`^${series} (\\S+)$`, "m").exec(metrics)?.[1] ?? 0);
  ctx.log(
    `replicas: statements on the replica ${counted('audience_db_reads_total\\{target="replica"\\}')}, ` +
      `on the primary ${counted('audience_db_reads_total\\{target="primary"\\}')}, ` +
      `token fallbacks ${counted('audience_db_replica_fallbacks_total\\{reason="token"\\}')}`,
  );
}

interface Servers {
  alone: Server;
  replicated: Server;
  start(readUrls: string | undefined): Promise<Server>;
  stop(server: Server): Promise<void>;
}

/** The mixed load on two primary-only processes, then on two reading from the replica. */
async function mixed(ctx: Context, primary: OwnCluster, { alone, replicated, start, stop }: Servers) {
  const seconds = 15;
  const runs: { name: string; requests: number; errors: number; ms: number[]; seconds: number; cpu: number }[] = [];
  for (const [name, first, readUrls] of [
    ["primary only", alone, undefined],
    ["one replica", replicated, replicated.readUrls],
  ] as const) {
    const second = await start(readUrls);
    try {
      const tenants: { members: string; clients: Client[] }[] = [];
      for (let w = 0; w < WORKSPACES; w++) {
        const { path, clients } = await tenant(first, [second], `Mixed ${name} ${w}`);
        const { body: audience } = await (clients[0] as Client).call<{ id: string }>(
          "POST",
          `${path}/audiences`,
          { name: "Readers" },
          201,
        );
        const memberIds = range(0, MEMBERS_EACH, (n) => `w${w}m${n}`);
        await (clients[0] as Client).call("POST", `${path}/audiences/${audience.id}/members`, { memberIds }, 200);
        tenants.push({ members: `${path}/audiences/${audience.id}/members`, clients });
      }
      ctx.log(`replicas: mixed load, ${seconds} s on two server processes (${name}), ${CLIENTS} clients`);
      const cpuBefore = primary.cpuSeconds();
      const end = performance.now() + seconds * 1_000;
      const ms: number[] = [];
      let errors = 0;
      const started = performance.now();
      await Promise.all(
        range(0, CLIENTS, async (c) => {
          // Each client keeps the token of its last write, as the SDK does.
          let token = "";
          for (let n = 0; performance.now() < end; n++) {
            const t = tenants[(c * 7 + n) % WORKSPACES] as (typeof tenants)[number];
            const client = t.clients[c % 2] as Client;
            const headers: Record<string, string> = token ? { "consistency-token": token } : {};
            const begun = performance.now();
            try {
              if (n % 5 !== 4) await client.call("GET", `${t.members}?limit=100`, undefined, 200, headers);
              else {
                const memberIds = range(0, ADD, (i) => `${name[0]}-c${c}-n${n}-${i}`);
                const answer = await client.call("POST", t.members, { memberIds }, 200, headers);
                token = String(answer.headers["consistency-token"] ?? "");
              }
            } catch {
              errors++;
            }
            ms.push(performance.now() - begun);
          }
        }),
      );
      const elapsed = (performance.now() - started) / 1_000;
      runs.push({ name, requests: ms.length, errors, ms, seconds: elapsed, cpu: primary.cpuSeconds() - cpuBefore });
    } finally {
      await stop(second);
    }
  }
  const [before, after] = runs as [(typeof runs)[number], (typeof runs)[number]];
  const perRequest = (run: typeof before) => (run.cpu * 1_000) / run.requests;
  const rate = (run: typeof before) => run.requests / run.seconds;
  ctx.rows.push({
    metric: "replica_mixed_primary_cpu",
    label: `mixed load on two server processes, ${CLIENTS} clients, 80% pages / 20% adds: the primary's CPU ms per request, reading from one replica (${rate(after).toFixed(0)} req/s, p50 ${summarize(after.ms).median.toFixed(1)} ms, ${after.errors} errors)`,
    unit: "ms",
    value: perRequest(after),
    baseline: perRequest(before),
    baselineLabel: `primary only (${rate(before).toFixed(0)} req/s, p50 ${summarize(before.ms).median.toFixed(1)} ms, ${before.errors} errors)`,
    ratio: perRequest(after) / perRequest(before),
    errors: after.errors + before.errors,
  });
}
