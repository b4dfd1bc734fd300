// The server under test for a run, the scenarios' context around it, and the set-ups the runner
// hands to the scenarios that declare them (registry.ts): receivers, a second server process,
// writes straight into the service's store, a restart with rate limiting on, the run's memory.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { openStore, type Store } from "../../src/platform/db/database.ts";
import { type Client, createClient } from "./http.ts";
import type { BenchOptions } from "./options.ts";
import { memoryRows, RssSampler } from "./process-memory.ts";
import { buildService, type ServiceProcess, startService } from "./processes.ts";
import { openPgliteRaw, openPgRaw } from "./raw.ts";
import { startReceiver } from "./receiver.ts";
import type { Made, Need, Setups } from "./scenario.ts";
import type { Context } from "./scenarios/scenario-context.ts";
import { cleanups, log, type Stores } from "./stores.ts";

/** A set-up the runner makes before a scenario, and undoes after it (if it must). */
interface Resource<T> {
  acquire(): Promise<T | undefined>;
  release?(): Promise<void>;
}
export type Resources = { [N in Exclude<Need, Made>]: Resource<Setups[N]> };

export interface Session {
  ctx: Context;
  resources: Resources;
}

export async function openSession(opts: BenchOptions, stores: Stores, started: number): Promise<Session> {
  const adminToken = randomBytes(24).toString("hex");
  const settings = {
    ...stores.serviceSettings,
    adminToken,
    // 10,000 members with e-mail and 4 fields is about 1.3 MB of JSON: more than the default 1 MiB.
    bodyLimit: 16 * 1_048_576,
    cpuProfDir: opts.cpuProfDir,
  };
  log("building the service (npm run build)");
  await buildService();
  log(`starting the service (${stores.describe})`);
  const opening = stores.openRaw();
  opening.catch(() => {}); // reported by the await below
  let service: ServiceProcess = await startService({ ...settings, rateLimitPerMinute: 0 });
  cleanups.push(() => service.stop());
  // Every server process of the run, for the memory rows: the first start's peak is in the first.
  const servers = [service];
  const raw = await opening;
  if (!service.workspaceId || !service.apiKey) throw new Error(`no first-start banner:\n${service.tail()}`);
  const rss = new RssSampler(service.pid);
  cleanups.push(async () => rss.stop());
  const clients: Client[] = [];
  cleanups.push(async () => {
    for (const client of clients) client.close();
  });
  const client = (token: string) => {
    const made = createClient(ctx.service.baseUrl, token);
    clients.push(made);
    return made;
  };
  await raw.query(`INSERT INTO workspaces (workspace_id, name) VALUES ($1, 'bench')`, [service.workspaceId]);

  const ctx: Context = {
    opts,
    service,
    rss,
    workspaceId: service.workspaceId,
    apiKey: service.apiKey,
    api: createClient(service.baseUrl, service.apiKey),
    admin: createClient(service.baseUrl, adminToken),
    raw,
    rawDatabaseUrl: stores.rawDatabaseUrl,
    rows: [],
    deadline: started + opts.maxMinutes * 60_000,
    log,
    analyze: () => stores.analyze(ctx.service.baseUrl),
    clientFor: client,
  };
  clients.push(ctx.api, ctx.admin);

  /** The server started again on the same store; the context follows it. */
  const restart = async (rateLimitPerMinute: number, between?: () => Promise<void>) => {
    ctx.rss.stop();
    await service.stop();
    await between?.();
    service = await startService({ ...settings, rateLimitPerMinute });
    ctx.service = service;
    ctx.rss = new RssSampler(service.pid);
  };

  const writeServiceStore: Setups["storeWriter"] = async (write) => {
    if (stores.serviceSettings.databaseUrl) {
      const db = await openPgRaw(stores.serviceSettings.databaseUrl);
      await write(db).finally(() => db.close());
      return;
    }
    await restart(0, async () => {
      const db = await openPgliteRaw(join(stores.serviceSettings.dataDir as string, "pglite"));
      // The service's statistics upkeep counts the changes it makes, and PGlite forgets the counts
      // when it closes: these rows are ANALYZEd here, as the upkeep would have had it written them.
      await write(db)
        .then(() => db.query("ANALYZE"))
        .finally(() => db.close());
    });
    servers.push(service);
    ctx.api = client(service.apiKey ?? ctx.apiKey);
    ctx.admin = client(adminToken);
  };

  const startSecondProcess: Setups["secondProcess"] = async () => {
    const second = await startService({ ...settings, rateLimitPerMinute: 0 });
    cleanups.push(() => second.stop());
    const own: Client[] = [];
    return {
      service: second,
      clientFor: (key) => {
        const made = createClient(second.baseUrl, key);
        own.push(made);
        return made;
      },
      async stop() {
        for (const made of own) made.close();
        await second.stop();
      },
    };
  };

  let receivers: Setups["receivers"] | undefined;
  let serviceStore: Store | undefined;
  const resources: Resources = {
    receivers: {
      acquire: async () => {
        receivers = { receiver: await startReceiver(), hanging: await startReceiver({ hang: true }) };
        return receivers;
      },
      release: async () => {
        await Promise.all([receivers?.receiver.close(), receivers?.hanging.close()]);
      },
    },
    // Several server processes share one database on PostgreSQL only.
    secondProcess: { acquire: async () => (stores.serviceSettings.databaseUrl ? startSecondProcess : undefined) },
    storeWriter: { acquire: async () => writeServiceStore },
    // The embedded store belongs to the server's process (PGlite in it, its data directory locked):
    // only PostgreSQL's database can be opened beside the server.
    serviceStore: {
      acquire: async () => {
        const { databaseUrl } = stores.serviceSettings;
        if (!databaseUrl) return undefined;
        serviceStore = await openStore({ databaseUrl, poolSize: 1, readPoolSize: 1, exportPoolSize: 1 });
        return serviceStore;
      },
      release: async () => {
        await serviceStore?.close();
        serviceStore = undefined;
      },
    },
    rateLimitedServer: {
      // The default configuration limits every API key (6,000/min); measured apart with a limit
      // too high to be reached, so that only the limiter's own cost shows.
      acquire: async () => {
        log("restarting the service with rate limiting on (RATE_LIMIT_PER_MINUTE=10000000)");
        await restart(10_000_000);
        return true;
      },
      release: async () => ctx.rss.stop(),
    },
    serverMemory: {
      acquire: async () => (bareRssMb) => memoryRows(servers, Math.max(rss.peakMb, ctx.rss.peakMb), bareRssMb),
    },
  };
  return { ctx, resources };
}
