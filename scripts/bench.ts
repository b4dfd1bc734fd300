// `npm run bench`: the service's performance against this machine's raw limits. Builds its own
// data, runs each scenario beside its raw baseline (the same work done by single SQL statements
// through the driver, or by a bare Fastify route), prints a table and one JSON line per scenario.
// Targets are reported, never asserted: the exit code is non-zero only when the run itself fails.
//
//   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test npm run bench [-- --quick]
//   npm run bench -- --embedded [--quick]
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type Client, createClient, statisticsChecked } from "./bench/http.ts";
import { type BenchOptions, parseOptions } from "./bench/options.ts";
import { memoryRows, RssSampler } from "./bench/process-memory.ts";
import { buildService, type ServiceProcess, startService } from "./bench/processes.ts";
import { openPgliteRaw, openPgRaw, type RawDb } from "./bench/raw.ts";
import { formatTable, jsonLine, type ResultRow } from "./bench/report.ts";
import { bulkAddNew } from "./bench/scenarios/bulk-add.ts";
import { bulkAddWithData } from "./bench/scenarios/bulk-add-with-data.ts";
import { feedPages } from "./bench/scenarios/events.ts";
import { exportMembers } from "./bench/scenarios/exports.ts";
import { getThroughput, getThroughputRateLimited } from "./bench/scenarios/get-throughput.ts";
import { importCsv } from "./bench/scenarios/import-csv.ts";
import { manyAudiences } from "./bench/scenarios/many-audiences.ts";
import { mergeAudiences } from "./bench/scenarios/merge.ts";
import { mixedLoad } from "./bench/scenarios/mixed-load.ts";
import { pages } from "./bench/scenarios/pages.ts";
import { ruleChange } from "./bench/scenarios/rule-change.ts";
import { scatteredUpdates } from "./bench/scenarios/scattered-updates.ts";
import type { Context, State } from "./bench/scenarios/scenario-context.ts";
import { search } from "./bench/scenarios/search.ts";
import { webhookDelivery } from "./bench/scenarios/webhooks.ts";

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** Undone in reverse order at the end, whatever happens. */
const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup().catch((error: unknown) => log(`cleanup: ${(error as Error).message}`));
  }
}

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
};

interface Stores {
  rawDatabaseUrl?: string;
  /** Opens the raw baseline's database (run while the service starts). */
  openRaw(): Promise<RawDb>;
  serviceSettings: { databaseUrl?: string; dataDir?: string };
  /** Brings both stores' planner statistics up to date; serviceUrl is the service's address now. */
  analyze(serviceUrl: string): Promise<void>;
  describe: string;
}

async function openStores(opts: BenchOptions): Promise<Stores> {
  if (opts.store === "postgres") {
    const adminUrl = opts.databaseUrl as string;
    if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(adminUrl).hostname)) {
      throw new Error("the benchmark only targets a PostgreSQL server on this machine (127.0.0.1)");
    }
    const admin = new pg.Pool({ connectionString: adminUrl, max: 1 });
    admin.on("error", () => {});
    cleanups.push(() => admin.end());
    const name = `bench_${randomBytes(5).toString("hex")}`;
    for (const database of [name, `${name}_raw`]) {
      await admin.query(`CREATE DATABASE ${database}`);
      if (opts.keep) log(`keeping database ${database} (--keep)`);
      else cleanups.push(() => admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
    }
    const serviceUrl = withDatabase(adminUrl, name);
    const service = new pg.Pool({ connectionString: serviceUrl, max: 1 });
    service.on("error", () => {});
    cleanups.push(() => service.end());
    const [version] = (
      await admin.query<{ v: string; settings: string }>(
        `SELECT current_setting('server_version') AS v, concat_ws(', ',
           'autovacuum=' || current_setting('autovacuum'), 'shared_buffers=' || current_setting('shared_buffers'),
           'work_mem=' || current_setting('work_mem'), 'max_wal_size=' || current_setting('max_wal_size'),
           'synchronous_commit=' || current_setting('synchronous_commit')) AS settings`,
      )
    ).rows;
    let raw: RawDb | undefined;
    return {
      async openRaw() {
        raw = await openPgRaw(withDatabase(adminUrl, `${name}_raw`));
        cleanups.push(() => (raw as RawDb).close());
        return raw;
      },
      serviceSettings: { databaseUrl: serviceUrl },
      rawDatabaseUrl: withDatabase(adminUrl, `${name}_raw`),
      analyze: async () => {
        await Promise.all([raw?.query("ANALYZE"), service.query("ANALYZE")]);
      },
      describe: `PostgreSQL ${version?.v} (${version?.settings}; databases ${name}, ${name}_raw)`,
    };
  }
  const dir = await mkdtemp(join(os.tmpdir(), "audience-bench-"));
  if (opts.keep) log(`keeping ${dir} (--keep)`);
  else cleanups.push(() => rm(dir, { recursive: true, force: true }));
  let raw: RawDb | undefined;
  return {
    async openRaw() {
      raw = await openPgliteRaw(join(dir, "raw"));
      cleanups.push(() => (raw as RawDb).close());
      return raw;
    },
    serviceSettings: { dataDir: join(dir, "service") },
    // PGlite has no autovacuum. The service's embedded store keeps its statistics itself, checking
    // every few seconds: the benchmark waits for two of its checks, as it would wait for
    // autovacuum on PostgreSQL. The raw baseline is ANALYZEd directly.
    analyze: async (serviceUrl) => {
      await raw?.query("ANALYZE");
      await statisticsChecked(serviceUrl, 2);
    },
    describe: `embedded PGlite (server DATA_DIR ${join(dir, "service")}, raw baseline in-process)`,
  };
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2), process.env);
  const started = Date.now();
  const loadAtStart = os.loadavg()[0] ?? 0;
  const deadline = started + opts.maxMinutes * 60_000;
  const stores = await openStores(opts);
  const adminToken = randomBytes(24).toString("hex");
  const serviceSettings = {
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
  let service: ServiceProcess = await startService({ ...serviceSettings, rateLimitPerMinute: 0 });
  cleanups.push(() => service.stop());
  // Every server process of the run, for the memory rows: the first start's peak is in the first.
  const servers = [service];
  const raw = await opening;
  if (!service.workspaceId || !service.apiKey) throw new Error(`no first-start banner:\n${service.tail()}`);
  const rss = new RssSampler(service.pid);
  cleanups.push(async () => rss.stop());
  const api = createClient(service.baseUrl, service.apiKey);
  const admin = createClient(service.baseUrl, adminToken);
  cleanups.push(async () => {
    api.close();
    admin.close();
  });
  await raw.query(`INSERT INTO workspaces (workspace_id, name) VALUES ($1, 'bench')`, [service.workspaceId]);

  const rows: ResultRow[] = [];
  const ctx: Context = {
    opts,
    service,
    rss,
    workspaceId: service.workspaceId,
    apiKey: service.apiKey,
    api,
    admin,
    raw,
    rawDatabaseUrl: stores.rawDatabaseUrl,
    rows,
    deadline,
    log,
    analyze: () => stores.analyze(ctx.service.baseUrl),
    clientFor: (key) => {
      const client = createClient(ctx.service.baseUrl, key);
      cleanups.push(async () => client.close());
      return client;
    },
    startSecondProcess: stores.serviceSettings.databaseUrl
      ? async () => {
          const second = await startService({ ...serviceSettings, rateLimitPerMinute: 0 });
          cleanups.push(() => second.stop());
          const clients: Client[] = [];
          return {
            service: second,
            clientFor: (key) => {
              const client = createClient(second.baseUrl, key);
              clients.push(client);
              return client;
            },
            async stop() {
              for (const client of clients) client.close();
              await second.stop();
            },
          };
        }
      : undefined,
    async writeServiceStore(write) {
      if (stores.serviceSettings.databaseUrl) {
        const db = await openPgRaw(stores.serviceSettings.databaseUrl);
        await write(db).finally(() => db.close());
        return;
      }
      ctx.rss.stop();
      await ctx.service.stop();
      const db = await openPgliteRaw(join(stores.serviceSettings.dataDir as string, "pglite"));
      // The service's statistics upkeep counts the changes it makes, and PGlite forgets the counts
      // when it closes: these rows are ANALYZEd here, as the upkeep would have had it written them.
      await write(db)
        .then(() => db.query("ANALYZE"))
        .finally(() => db.close());
      service = await startService({ ...serviceSettings, rateLimitPerMinute: 0 });
      servers.push(service);
      Object.assign(ctx, {
        service,
        rss: new RssSampler(service.pid),
        api: createClient(service.baseUrl, service.apiKey ?? ctx.apiKey),
        admin: createClient(service.baseUrl, adminToken),
      });
    },
  };
  const state: State = {};
  const context = {
    store: opts.store,
    size: opts.size,
    batch: opts.batch,
    quick: opts.quick,
  };
  const print = () => {
    const title =
      `audience-service benchmark: ${stores.describe}; ${opts.size.toLocaleString("en-US")} members, ` +
      `${opts.batch.toLocaleString("en-US")} per request${opts.quick ? " (--quick)" : ""}\n` +
      `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
      `node ${process.version}; run took ${Math.round((Date.now() - started) / 1_000)} s; ` +
      `1-min load average ${loadAtStart.toFixed(1)} at start, ${(os.loadavg()[0] ?? 0).toFixed(1)} at the end`;
    process.stdout.write(`\n${formatTable(rows, title)}\n\n`);
    for (const row of rows) process.stdout.write(`${jsonLine(row, context)}\n`);
  };

  try {
    const skip = opts.skip;
    await bulkAddNew(ctx, state);
    if (!skip.has("pages")) await pages(ctx, state);
    if (!skip.has("throughput")) await getThroughput(ctx, state);
    if (!skip.has("data")) await bulkAddWithData(ctx, state);
    if (!skip.has("export")) await exportMembers(ctx, state);
    if (!skip.has("merge")) await mergeAudiences(ctx);
    if (!skip.has("rules")) await ruleChange(ctx);
    if (!skip.has("updates")) await scatteredUpdates(ctx);
    if (!skip.has("feed")) await feedPages(ctx);
    if (!skip.has("audiences")) await manyAudiences(ctx);
    if (!skip.has("search")) await search(ctx);
    if (!skip.has("mixed")) await mixedLoad(ctx);
    if (!skip.has("webhooks") && state.everyone) await webhookDelivery(ctx, state.everyone);
    if (!skip.has("import")) await importCsv(ctx);

    rows.push(...memoryRows(servers, Math.max(rss.peakMb, ctx.rss.peakMb), state.bareRssMb));

    if (opts.rateLimitedRun && state.everyone && state.bareRps) {
      // The default configuration limits every API key (6,000/min); measured apart with a limit
      // too high to be reached, so that only the limiter's own cost shows.
      log("HTTP throughput again, restarted with rate limiting on (RATE_LIMIT_PER_MINUTE=10000000)");
      rss.stop();
      await service.stop();
      service = await startService({ ...serviceSettings, rateLimitPerMinute: 10_000_000 });
      ctx.service = service;
      ctx.rss = new RssSampler(service.pid);
      await getThroughputRateLimited(ctx, state.everyone, state.bareRps);
      ctx.rss.stop();
    }
  } catch (error) {
    if (rows.length > 0) print();
    throw error;
  }
  print();
  return 0;
}

process.on("SIGINT", () => {
  log("interrupted: cleaning up");
  void cleanUp().then(() => process.exit(130));
});

let code = 1;
try {
  code = await main();
} catch (error) {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  code = 1;
}
await cleanUp();
process.exit(code);
