// What the scenarios share. Each scenario runs its raw baseline in the same run, interleaved with
// the service (a raw batch, then the service's request for the same batch; a raw page read, then
// the service's), so that on a shared machine both see the same background load.
import type { Client } from "../http.ts";
import type { BenchOptions } from "../options.ts";
import { cpuSeconds, type RssSampler } from "../process-memory.ts";
import type { ServiceProcess } from "../processes.ts";
import { type RawDb, rawSql } from "../raw.ts";
import type { ResultRow } from "../report.ts";

export interface Context {
  opts: BenchOptions;
  service: ServiceProcess;
  rss: RssSampler;
  /** The workspace of the first-start banner, and a client with its key. */
  workspaceId: string;
  apiKey: string;
  api: Client;
  admin: Client;
  raw: RawDb;
  /** PostgreSQL: the raw baseline's database, for the bare route's SQL query. */
  rawDatabaseUrl?: string | undefined;
  rows: ResultRow[];
  deadline: number;
  log(message: string): void;
  /**
   * ANALYZE, as autovacuum would shortly after a bulk load: both databases on PostgreSQL; on the
   * embedded store the raw baseline's, and the service's store is waited for (it keeps its own
   * statistics: PGlite has no autovacuum).
   */
  analyze(): Promise<void>;
  /** A client of the service with another key. */
  clientFor(apiKey: string): Client;
}

/**
 * Writes rows straight into the service's store (data no API request could make fast enough).
 * The embedded store belongs to the server's process: it is stopped meanwhile and restarted.
 */
export type StoreWriter = (write: (db: RawDb) => Promise<void>) => Promise<void>;

/** PostgreSQL only (several server processes share one database): another server process. */
export type StartSecondProcess = () => Promise<SecondProcess>;

export interface SecondProcess {
  service: ServiceProcess;
  clientFor(apiKey: string): Client;
  stop(): Promise<void>;
}

/** The audience of the bulk add with data, in a workspace of its own, and that workspace's key. */
export interface DataAudience {
  workspaceId: string;
  audienceId: string;
  apiKey: string;
  members: number;
}

/** What the bare Fastify route measured: the raw HTTP limit, and a bare process's memory. */
export interface BareRoute {
  rps: number;
  rssMb?: number | undefined;
}

export const ws = (ctx: Context, workspaceId = ctx.workspaceId) => `/v0/workspaces/${workspaceId}`;

export function checkTime(ctx: Context): void {
  if (Date.now() > ctx.deadline) throw new Error(`gave up: the run exceeded --max-minutes=${ctx.opts.maxMinutes}`);
}

/** The server's CPU seconds and peak RSS over one scenario, and the scenario's wall time. */
export function measure(ctx: Context) {
  ctx.rss.nextWindow();
  const cpu = cpuSeconds(ctx.service.pid) ?? 0;
  const started = Date.now();
  return () => ({
    serverPeakRssMb: ctx.rss.nextWindow(),
    serverCpuS: (cpuSeconds(ctx.service.pid) ?? cpu) - cpu,
    wallS: (Date.now() - started) / 1_000,
  });
}

export async function createAudience(ctx: Context, name: string, workspaceId = ctx.workspaceId, api = ctx.api) {
  const { body } = await api.call<{ id: string }>("POST", `${ws(ctx, workspaceId)}/audiences`, { name }, 201);
  await rawSql.audience(ctx.raw, workspaceId, body.id, name);
  return body.id;
}

/**
 * Waits until the service has published the events of the writes made so far (the feed's head
 * stops moving): its relay publishes after each write, in the background, and a measurement
 * taken meanwhile would time the relay's work too.
 */
export async function eventsPublished(ctx: Context, workspaceId = ctx.workspaceId, api = ctx.api): Promise<void> {
  let last = "";
  for (;;) {
    checkTime(ctx);
    const { body } = await api.call<{ cursor: string }>("GET", `${ws(ctx, workspaceId)}/events/latest`, undefined, 200);
    if (body.cursor === last) return;
    last = body.cursor;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
