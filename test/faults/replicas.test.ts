import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.ts";
import { openStore } from "../../src/platform/db/database.ts";
import {
  killProcessGroup,
  type Reply,
  type ServerProcess,
  send as sendTo,
  startServerProcess,
} from "../reliability/server-process.ts";
import { checkedClient } from "../support/checked-client.ts";
import { startPgBouncer } from "../support/pgbouncer.ts";
import { createOwnCluster, type OwnCluster } from "./own-cluster.ts";
import { metric, type Replicated, readsWhile, until } from "./replica-support.ts";

/**
 * Reads on a streaming replica (DATABASE_READ_URLS): one primary and one replica of this file's
 * own (`pg_basebackup -R`), shared by its tests, and the real server process in front of them.
 * Reads without a token really go to the replica (a write is not in them yet while the replica
 * holds its commit back with recovery_min_apply_delay); with the write's Consistency-Token they
 * have it. A replica stopped, frozen, lagging beyond the limit or promoted costs no read its 200,
 * nor more time than the connect timeout; no write ever reaches the replica; the feed read from
 * the replica has no gaps.
 */
const TIMEOUTS = { connect: 2_000, read: 3_000 };
const MAX_LAG_MS = 4_000;
// The connect timeout (a frozen replica is given up after it), a probe's interval, and slack
// for a shared 2-core machine.
const ANSWER_BOUND_MS = TIMEOUTS.connect + 250 + 2_000;

let primary: OwnCluster | undefined;
let replica: OwnCluster | undefined;
let server: ServerProcess | undefined;

beforeAll(async () => {
  if (!process.env.TEST_DATABASE_URL) return;
  primary = await createOwnCluster();
  replica = await createOwnCluster({ replicaOf: primary });
  // Every data-changing statement the replica is sent goes to its log (it would refuse it too).
  await configureReplica("log_statement = 'mod'");
  server = await startServerProcess({
    DATABASE_URL: primary.url(),
    DATABASE_READ_URLS: replica.url(),
    DATABASE_CONNECT_TIMEOUT_MS: String(TIMEOUTS.connect),
    DATABASE_READ_TIMEOUT_MS: String(TIMEOUTS.read),
    DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
  });
});
afterAll(async () => {
  if (server) await killProcessGroup(server);
  // Each dropped whatever happened before: the replica first, while its primary still runs.
  try {
    replica?.drop();
  } finally {
    primary?.drop();
  }
});

const ctx = (): Replicated => {
  const { workspaceId, apiKey } = server?.firstStart ?? { workspaceId: "", apiKey: "" };
  return { server: server as ServerProcess, ws: `/v0/workspaces/${workspaceId}`, apiKey };
};
const send = (method: string, path: string, body?: unknown, token?: string | null): Promise<Reply> =>
  sendTo(server as ServerProcess, ctx().apiKey, method, path, body, token ? { "consistency-token": token } : {});

/** The replica holds each commit back this long before applying it (0: applies at once). */
const delayReplay = (ms: number) => configureReplica(`recovery_min_apply_delay = '${ms}ms'`);

/** A setting of the replica's, changed and reloaded (on a connection of its own: the replica is stopped at times). */
async function configureReplica(setting: string): Promise<void> {
  const client = new pg.Client({ connectionString: replica?.url() });
  client.on("error", () => {});
  await client.connect();
  try {
    await client.query(`ALTER SYSTEM SET ${setting}`);
    await client.query("SELECT pg_reload_conf()");
  } finally {
    await client.end();
  }
}

/** Creates an audience; its name, and the token of the write. */
async function createAudience(prefix: string) {
  const name = `${prefix} ${Math.random().toString(36).slice(2, 8)}`;
  const created = await send("POST", `${ctx().ws}/audiences`, { name });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, name, token: created.headers.get("consistency-token") };
}

const listed = async (name: string, token?: string | null) => {
  const page = await send("GET", `${ctx().ws}/audiences?limit=500`, undefined, token);
  expect(page.status).toBe(200);
  return (page.body.results as { name: string }[]).some((audience) => audience.name === name);
};

describe.runIf(process.env.TEST_DATABASE_URL)("reads on a streaming replica", () => {
  it("answers a read without a token from the replica (stale), and with the write's token fresh", async () => {
    await until(async () => (await metric(ctx(), "audience_db_replica_available")) === 1, "the replica is read from");
    // Held back long enough that the read without a token comes before the replay on a busy
    // machine too (two seconds did not, once).
    await delayReplay(10_000);
    const before = await metric(ctx(), 'audience_db_reads_total{target="replica"}');
    const { name, token } = await createAudience("Replica stale");
    expect(token).toMatch(/^[0-9A-F]{16}$/);
    expect(await listed(name)).toBe(false);
    expect(await listed(name, token)).toBe(true);
    expect(await metric(ctx(), 'audience_db_reads_total{target="replica"}')).toBeGreaterThan(before);
    expect(await metric(ctx(), 'audience_db_replica_fallbacks_total{reason="token"}')).toBeGreaterThan(0);
    // Once applied, the replica answers it without a token too.
    await until(() => listed(name), "the replica applied the write");
    await delayReplay(0);
  });

  it("follows the feed from the replica with its token, without a gap", async () => {
    const { ws } = ctx();
    const audience = await createAudience("Feed");
    let cursor = (await send("GET", `${ws}/events/latest`)).body.cursor as string;
    let token = audience.token;
    const sequences: number[] = [];
    const replicaReads = await metric(ctx(), 'audience_db_reads_total{target="replica"}');
    // Replay held back for part of the run: token reads go to the primary, the others to a
    // replica behind the cursor they were given.
    for (let round = 0; round < 30; round++) {
      if (round === 10) await delayReplay(500);
      if (round === 20) await delayReplay(0);
      const added = await send("POST", `${ws}/audiences/${audience.id}/members`, { memberIds: [`feed_${round}`] });
      expect(added.status).toBe(200);
      token = added.headers.get("consistency-token") ?? token;
      const page = await send("GET", `${ws}/events?limit=50&after=${cursor}`, undefined, round % 2 ? token : null);
      expect(page.status).toBe(200);
      sequences.push(...(page.body.results as { sequence: number }[]).map((event) => event.sequence));
      cursor = page.body.pageInfo.endCursor;
    }
    // The rest, once the relay has published every write's events.
    await until(async () => {
      const page = await send("GET", `${ws}/events?limit=50&after=${cursor}`, undefined, token);
      sequences.push(...(page.body.results as { sequence: number }[]).map((event) => event.sequence));
      cursor = page.body.pageInfo.endCursor;
      return sequences.length >= 31;
    }, "every write's events were read");
    expect(sequences).toEqual(sequences.map((_, i) => (sequences[0] as number) + i));
    expect(await metric(ctx(), 'audience_db_reads_total{target="replica"}')).toBeGreaterThan(replicaReads);
  });

  it("sends no write to the replica", async () => {
    // Everything before (writes, reads, the relay's and the clock's work) ran meanwhile.
    expect(await metric(ctx(), 'audience_db_replica_fallbacks_total{reason="failed"}')).toBe(0);
    const log = replica?.log() ?? "";
    expect(log).not.toMatch(/read-only transaction/);
    // The test's own settings aside (ALTER SYSTEM), no statement that changes anything was sent.
    const changes = log.split("\n").filter((line) => /(statement|execute [^:]*): (?!ALTER SYSTEM)/.test(line));
    expect(changes).toEqual([]);
  });

  it("cancels a read on the replica past the read timeout, leaving nothing running there", async () => {
    await until(async () => (await metric(ctx(), "audience_db_replica_available")) === 1, "the replica is read from");
    const holder = new pg.Client({ connectionString: primary?.url() });
    const onReplica = new pg.Client({ connectionString: replica?.url() });
    onReplica.on("error", () => {});
    await holder.connect();
    await onReplica.connect();
    const count = async (sql: string) => (await onReplica.query<{ n: number }>(sql)).rows[0]?.n ?? 0;
    try {
      // An exclusive lock taken on the primary is replayed on the replica, whose reads of members
      // then wait on it: a read made slow for sure (and on the primary too, where it falls back).
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE members IN ACCESS EXCLUSIVE MODE");
      await until(
        async () =>
          (await count(
            "SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'members'::regclass AND mode = 'AccessExclusiveLock'",
          )) > 0,
        "the replica holds the lock",
      );
      const answer = await send("POST", `${ctx().ws}/audiences/preview`, {
        filter: { field: "email", op: "contains", value: "nobody" },
      });
      expect(answer.status).toBe(503);
      await until(
        async () =>
          (await count(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'",
          )) === 0,
        "no read waits on the replica",
      );
    } finally {
      await holder.query("ROLLBACK");
      await holder.end();
      await onReplica.end();
    }
  });

  it("leaves a replica lagging beyond the limit out of reads without a token", async () => {
    await delayReplay(3 * MAX_LAG_MS);
    await createAudience("Held back");
    await until(async () => (await metric(ctx(), "audience_db_replica_lag_seconds")) * 1000 > MAX_LAG_MS, "it lags");
    const { name } = await createAudience("Past the lag");
    expect(await listed(name)).toBe(true);
    expect(await metric(ctx(), 'audience_db_replica_fallbacks_total{reason="lag"}')).toBeGreaterThan(0);
    await delayReplay(0);
    await until(async () => (await metric(ctx(), "audience_db_replica_lag_seconds")) === 0, "it caught up");
  });

  it("answers every read, in time, while the replica is stopped, then frozen", async () => {
    const db = replica as OwnCluster;
    const stopped = await readsWhile(ctx(), async () => {
      await db.stop();
      await until(async () => (await metric(ctx(), "audience_db_replica_available")) === 0, "it is left out");
    });
    await db.start();
    await until(async () => (await metric(ctx(), "audience_db_replica_available")) === 1, "it is back");
    const frozen = await readsWhile(ctx(), async () => {
      await db.freeze();
      await until(async () => (await metric(ctx(), "audience_db_replica_available")) === 0, "it is left out");
    });
    await db.thaw();
    await until(async () => (await metric(ctx(), "audience_db_replica_available")) === 1, "it is back");
    console.log(`replica faults: ${JSON.stringify({ stopped: stopped.report, frozen: frozen.report })}`);
    for (const run of [stopped, frozen]) {
      expect(run.report.reads).toBeGreaterThan(10);
      expect(run.failures).toEqual([]);
      expect(run.report.longestMs).toBeLessThan(ANSWER_BOUND_MS);
    }
    expect(await metric(ctx(), 'audience_db_replica_fallbacks_total{reason="unavailable"}')).toBeGreaterThan(0);
  });

  it("reads from the replica through PgBouncer as directly; the SDK reads its own writes", async () => {
    const bouncer = await startPgBouncer("127.0.0.1", (replica as OwnCluster).port);
    const store = await openStore({
      databaseUrl: (primary as OwnCluster).url(),
      readUrls: [bouncer.url((replica as OwnCluster).url())],
      poolSize: 2,
      connectTimeoutMs: TIMEOUTS.connect,
    });
    const app = await buildApp({ store, workers: false });
    try {
      const baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });
      const via: Replicated = { ...ctx(), server: { baseUrl } };
      await until(async () => (await metric(via, "audience_db_replica_available")) === 1, "the replica is read from");
      await delayReplay(2_000);
      const api = checkedClient(baseUrl, via.apiKey);
      const workspaceId = via.ws.split("/").at(-1) as string;
      const name = `Through PgBouncer ${Math.random().toString(36).slice(2, 8)}`;
      await api.POST("/v0/workspaces/{workspaceId}/audiences", { params: { path: { workspaceId } }, body: { name } });
      const page = await api.GET("/v0/workspaces/{workspaceId}/audiences", {
        params: { path: { workspaceId }, query: { limit: 500 } },
      });
      expect(page.results.map((audience) => audience.name)).toContain(name);
      // A read without the token: the replica, through PgBouncer, has not applied it yet.
      const stale = await sendTo({ baseUrl }, via.apiKey, "GET", `${via.ws}/audiences?limit=500`);
      expect((stale.body.results as { name: string }[]).map((audience) => audience.name)).not.toContain(name);
      expect(await metric(via, 'audience_db_reads_total{target="replica"}')).toBeGreaterThan(0);
    } finally {
      await delayReplay(0);
      await app.close();
      await store.close();
      await bouncer.stop();
    }
  });

  it("leaves a promoted replica out", async () => {
    const promoted = await readsWhile(ctx(), async () => {
      await (replica as OwnCluster).promote();
      await until(async () => (await metric(ctx(), "audience_db_replica_available")) === 0, "it is left out");
    });
    expect(promoted.failures).toEqual([]);
    // What the primary has now, the promoted server never gets: only the primary answers.
    const { name } = await createAudience("After the promotion");
    expect(await listed(name)).toBe(true);
  });
});
