import { DEFAULTS } from "./defaults.ts";

/** How webhook hosts are resolved, at creation and when connecting (tests substitute a table). */
export type Resolve = (host: string) => Promise<string[]>;

/**
 * The settings of the application and its features, by section, as the composition root hands
 * them out: each feature receives its own section. The environment (config.ts) fills them; a
 * test gives only what it changes (PartialSettings) and resolveSettings fills in the defaults.
 */
export interface Settings {
  http: {
    bodyLimit: number;
    requestTimeoutMs: number;
    /** Where clients reach the API (PUBLIC_URL), for the docs page's servers. */
    publicUrl: string | undefined;
    /** The token admin operations require (ADMIN_TOKEN); absent: they are disabled. */
    adminToken: string | undefined;
    /** The bearer token GET /metrics requires (METRICS_TOKEN); absent: none. */
    metricsToken: string | undefined;
  };
  rateLimit: { perMinute: number; heavyPerKey: number };
  cache: { audienceTtlMs: number };
  events: { retentionDays: number };
  activities: { retentionDays: number; purgeIntervalMs: number };
  /** costBudget absent: the store kind's default (DEFAULTS.rules.costBudget). */
  rules: { timeIntervalSeconds: number; costBudget: number | undefined };
  webhooks: {
    allowPrivate: boolean;
    timeoutMs: number;
    /** Host resolution; absent: the system resolver. */
    resolve: Resolve | undefined;
    /** When delivery attempts are made; absent: the Standard Webhooks schedule. */
    attemptOffsetsMs: readonly number[] | undefined;
  };
  imports: {
    maxBytes: number;
    leaseMs: number;
    /** Rows per transaction; absent: the store kind's default (DEFAULTS.imports.chunkRows). */
    chunkRows: number | undefined;
    /** Jobs run at once by a process, each of another workspace. */
    workers: number;
  };
  exports: {
    batchSize: number;
    readAhead: number;
    /** Exports streamed at once by this process, and of those, by one API key. */
    concurrency: number;
    perKey: number;
    /** How long a client may take nothing of its file before it is disconnected. */
    writeTimeoutMs: number;
    /** How long a client may take nothing before its place goes to an export that would be refused. */
    stalledAfterMs: number;
  };
}

export type PartialSettings = { [S in keyof Settings]?: Partial<Settings[S]> };

/** Each section of `given` over the defaults; a property given as undefined keeps its default. */
export function resolveSettings(given: PartialSettings = {}): Settings {
  const defaults: Settings = {
    http: {
      bodyLimit: DEFAULTS.server.bodyLimit,
      requestTimeoutMs: DEFAULTS.server.requestTimeoutMs,
      publicUrl: undefined,
      adminToken: undefined,
      metricsToken: undefined,
    },
    rateLimit: { ...DEFAULTS.rateLimit },
    cache: { ...DEFAULTS.cache },
    events: { ...DEFAULTS.events },
    activities: { ...DEFAULTS.activities },
    rules: { timeIntervalSeconds: DEFAULTS.rules.timeIntervalSeconds, costBudget: undefined },
    webhooks: { ...DEFAULTS.webhooks, resolve: undefined, attemptOffsetsMs: undefined },
    imports: {
      maxBytes: DEFAULTS.imports.maxBytes,
      leaseMs: DEFAULTS.imports.leaseMs,
      chunkRows: undefined,
      workers: DEFAULTS.imports.workers,
    },
    exports: { ...DEFAULTS.exports },
  };
  const resolved = { ...defaults } as Record<string, object>;
  for (const [section, values] of Object.entries(given)) {
    const defined = Object.entries(values ?? {}).filter(([, value]) => value !== undefined);
    resolved[section] = { ...resolved[section], ...Object.fromEntries(defined) };
  }
  return resolved as unknown as Settings;
}
