import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.ts";
import { createServices } from "../../src/composition.ts";
import { openStore } from "../../src/platform/db/database.ts";
import { sqlState } from "../../src/platform/db/pg-errors.ts";
import { checkedClient } from "../support/checked-client.ts";
import { createDatabase } from "../support/live-server.ts";
import { type PgBouncer, startPgBouncer } from "../support/pgbouncer.ts";

/**
 * Behind a stock PgBouncer in transaction pooling mode the service used not to start (it sent a
 * startup parameter PgBouncer refuses), and with that ignored its cache invalidation silently fell
 * back to the 5 s expiry. Two server processes (here two apps on two stores) share a database
 * through PgBouncer: one LISTENs through PgBouncer too, one on a direct connection.
 */
let bouncer: PgBouncer | undefined;
let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
const cleanups: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  if (!process.env.TEST_DATABASE_URL) return;
  bouncer = await startPgBouncer();
  database = await createDatabase(process.env.TEST_DATABASE_URL, "audience_pgbouncer");
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await database?.drop();
  await bouncer?.stop();
});

/** A server on the database through PgBouncer; its log lines are kept. */
async function serverBehindBouncer(listenUrl: string | undefined) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).trim().split("\n"));
      done();
    },
  });
  const store = await openStore({ databaseUrl: bouncer?.url(database?.url ?? ""), listenUrl, poolSize: 3 });
  // Cached names would otherwise live for 10 minutes: only a notification can refresh them sooner.
  const app = await buildApp({
    store,
    logger: { level: "info", stream },
    settings: { cache: { audienceTtlMs: 600_000 } },
  });
  const baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });
  cleanups.push(async () => {
    await app.close();
    await store.close();
  });
  const logged = (text: string) => lines.some((line) => line.includes(text));
  return { store, baseUrl, logged };
}

const until = async (condition: () => Promise<boolean> | boolean, what: string) => {
  for (const deadline = Date.now() + 15_000; !(await condition()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe.runIf(process.env.TEST_DATABASE_URL)("behind PgBouncer in transaction pooling mode", () => {
  it("starts, serves, and hears other processes' changes on a direct LISTEN connection, or says it cannot", async () => {
    const direct = await serverBehindBouncer(database?.url);
    const pooled = await serverBehindBouncer(undefined);
    const { workspaceId, apiKey } = (await createServices(direct.store).admin.bootstrap()) ?? {
      workspaceId: "",
      apiKey: "",
    };
    const path = { params: { path: { workspaceId } } };
    const onDirect = checkedClient(direct.baseUrl, apiKey);
    const onPooled = checkedClient(pooled.baseUrl, apiKey);

    // The one LISTENing on the direct connection hears its probe; the other is told that it cannot.
    await until(() => direct.logged("receiving audience change notifications"), "the direct LISTEN is live");
    await until(() => pooled.logged("set DATABASE_LISTEN_URL to a direct connection"), "the pooled LISTEN is reported");

    const { id } = await onPooled.POST("/v0/workspaces/{workspaceId}/audiences", { ...path, body: { name: "Before" } });
    const audience = { params: { path: { workspaceId, audienceId: id } } };
    const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
    const nameOn = async (api: typeof onDirect) => (await api.GET(AUDIENCE, audience)).name;
    const rename = (api: typeof onDirect, name: string) => api.PATCH(AUDIENCE, { ...audience, body: { name } });
    expect(await nameOn(onDirect)).toBe("Before");

    // Renamed through the other server: the direct listener drops its cached name when notified.
    await rename(onPooled, "After");
    await until(async () => (await nameOn(onDirect)) === "After", "the rename is seen by the other server");
    // The server that cannot hear notifications caches nothing, so it is never stale either.
    expect(await nameOn(onPooled)).toBe("After");
    await rename(onDirect, "Again");
    expect(await nameOn(onPooled)).toBe("Again");
  });

  it("prepares statements until two connections meet on one server connection, then sends them unnamed", async () => {
    // One server connection behind PgBouncer: a store's two connections of a pool both reach it.
    const single = await startPgBouncer("127.0.0.1", Number(new URL(database?.url ?? "").port || 5432), 1);
    cleanups.push(() => single.stop());
    const open = async (lost: unknown[]) => {
      const store = await openStore({
        databaseUrl: single.url(database?.url ?? ""),
        listenUrl: database?.url,
        readPoolSize: 2,
        poolSize: 2,
        onPreparedStatementsLost: (error) => lost.push(error),
      });
      cleanups.push(() => store.close());
      return store;
    };

    // Reads: the second prepares what the first left on the server connection, is refused, and
    // runs again unnamed.
    const lostOnReads: unknown[] = [];
    const reader = await open(lostOnReads);
    const read = (n: number) => reader.db.$queryRaw<{ n: number }[]>`SELECT ${n}::int AS n`;
    expect(await Promise.all([read(1), read(2)])).toEqual([[{ n: 1 }], [{ n: 2 }]]);
    expect(lostOnReads.map(sqlState)).toEqual(["42P05"]);

    // Write transactions, on a store of their own that has named nothing yet: the one refused
    // runs again whole.
    const lostOnWrites: unknown[] = [];
    const writer = await open(lostOnWrites);
    const write = (n: number) => writer.transaction((tx) => tx.$queryRaw`SELECT ${n}::int AS m`);
    expect(await Promise.all([write(3), write(4)])).toEqual([[{ m: 3 }], [{ m: 4 }]]);
    expect(lostOnWrites.map(sqlState)).toEqual(["42P05"]);
  });
});
