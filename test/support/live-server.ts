import { randomBytes } from "node:crypto";
import type { Problem, ResultOf } from "@audience-service/client";
import pg from "pg";
import type { paths } from "../../generated/api.d.ts";
import { type AppOptions, buildApp } from "../../src/app.ts";
import type { PartialSettings } from "../../src/config/settings.ts";
import { openStore, type Store, type StoreOptions } from "../../src/platform/db/database.ts";
import { checkResponse } from "./contract.ts";
import { embeddedTemplate } from "./embedded-template.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

/** A test's settings laid over the fixture's, section by section; an undefined value keeps the fixture's. */
function mergeSettings(base: PartialSettings, over: PartialSettings = {}): PartialSettings {
  const merged = { ...base } as Record<string, object>;
  for (const [section, values] of Object.entries(over)) {
    const defined = Object.entries(values ?? {}).filter(([, value]) => value !== undefined);
    merged[section] = { ...merged[section], ...Object.fromEntries(defined) };
  }
  return merged as PartialSettings;
}

/**
 * A live server on a fresh store: the embedded store in memory, or, when TEST_DATABASE_URL is
 * set, a PostgreSQL database created for this test file and dropped afterwards.
 */
export interface LiveServer {
  baseUrl: string;
  store: Store;
  /** The PostgreSQL database it serves; undefined on the embedded store. */
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

export interface LiveServerOptions {
  /** Serve the PostgreSQL database another server created (its databaseUrl) instead of a new one. */
  databaseUrl?: string | undefined;
  audienceCacheTtlMs?: number;
  /** Settings of the application other than the test defaults (webhook delivery, say). */
  settings?: PartialSettings;
  /** Run the background work in this server (default true). */
  workers?: AppOptions["workers"];
  /** Store limits other than the defaults (pool sizes, timeouts, the write queue). */
  store?: Omit<StoreOptions, "databaseUrl" | "listenUrl" | "dataDir">;
  /** The store as the application sees it (a test that counts what it sends: round-trips.ts). */
  wrapStore?: (store: Store) => Store;
}

/**
 * Where the server LISTENs: with TEST_DATABASE_LISTEN_URL set (the suite running through
 * PgBouncer in transaction mode), the same database on that direct server.
 */
function listenUrlFor(databaseUrl: string | undefined): string | undefined {
  const direct = process.env.TEST_DATABASE_LISTEN_URL;
  if (!databaseUrl || !direct) return undefined;
  const url = new URL(direct);
  url.pathname = new URL(databaseUrl).pathname;
  return url.toString();
}

export async function startLiveServer(options: LiveServerOptions = {}): Promise<LiveServer> {
  const database =
    options.databaseUrl === undefined && process.env.TEST_DATABASE_URL
      ? await createDatabase(process.env.TEST_DATABASE_URL)
      : undefined;
  const databaseUrl = options.databaseUrl ?? database?.url;
  const store = await openStore({
    databaseUrl,
    listenUrl: listenUrlFor(databaseUrl),
    template: databaseUrl ? undefined : await embeddedTemplate(),
    poolSize: 5,
    ...options.store,
  });
  const app = await buildApp({
    store: options.wrapStore ? options.wrapStore(store) : store,
    // Rate limiting at its production default, so every API test runs with it on.
    settings: mergeSettings(
      { http: { adminToken: ADMIN_TOKEN }, cache: { audienceTtlMs: options.audienceCacheTtlMs } },
      options.settings,
    ),
    workers: options.workers,
  });
  const baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    baseUrl,
    store,
    databaseUrl,
    async close() {
      await app.close();
      await store.close();
      await database?.drop();
    },
  };
}

/**
 * A store without a server, for tests of the store itself: the embedded one in memory, or a
 * PostgreSQL database of its own when TEST_DATABASE_URL is set (dropped by close()).
 */
export async function openTestStore(): Promise<{ store: Store; close(): Promise<void> }> {
  const database = process.env.TEST_DATABASE_URL ? await createDatabase(process.env.TEST_DATABASE_URL) : undefined;
  const store = await openStore({
    databaseUrl: database?.url,
    template: database ? undefined : await embeddedTemplate(),
  });
  return {
    store,
    async close() {
      await store.close();
      await database?.drop();
    },
  };
}

/** A PostgreSQL database of its own on the server at serverUrl, dropped by drop(). */
export async function createDatabase(serverUrl: string, prefix = "audience_test") {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A method of the contract, as call() sends it. */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

declare const template: unique symbol;
/** A URL built by urlOf() from a path template of the contract: call() types its answer by it. */
export type ContractUrl<P extends keyof paths> = string & { readonly [template]: P };

type PathParams<P extends keyof paths> = paths[P]["parameters"] extends { path: infer X } ? X : undefined;
type OperationAt<P extends keyof paths, M extends string> =
  paths[P] extends Record<Lowercase<M>, infer Op> ? Op : never;

/**
 * The URL of one contract path: the template's parameters filled in (URL-encoded), plus a query
 * string sent as is (it may be deliberately invalid).
 */
export function urlOf<P extends keyof paths>(path: P, params: PathParams<P>, query = ""): ContractUrl<P> {
  const values = (params ?? {}) as Record<string, string>;
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ""));
  return `${filled}${query ? `?${query}` : ""}` as ContractUrl<P>;
}

/** The success body of the operation at path template P for method M; unknown for a URL not from urlOf(). */
export type DataOf<P extends keyof paths, M extends string> = [P] extends [never]
  ? unknown
  : ResultOf<OperationAt<P, M>>;

/**
 * The answer to a raw request: the success body typed from the operation when the URL came from
 * urlOf() (unknown for any other URL), or the problem document of an error answer.
 */
export interface RawResponse<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body of a 2xx answer. */
  data: T | undefined;
  /** The problem document of an application/problem+json answer. */
  problem: Problem | undefined;
}

export interface RequestOptions {
  token?: string | undefined;
  /** Sent as JSON, whatever it is: for bodies the contract refuses. */
  body?: unknown;
  /** Sent as is, instead of body. */
  rawBody?: string | Blob;
  headers?: Record<string, string>;
}

/**
 * Sends one request that the typed SDK cannot express (malformed JSON, a wrong media type, a body
 * or query the contract refuses, a URL generated from the contract at run time) and checks the
 * response against the contract (status, media type, schema) before any assertion sees it.
 */
export async function call<M extends string, P extends keyof paths = never>(
  server: { baseUrl: string },
  method: M,
  url: ContractUrl<P> | string,
  options: RequestOptions = {},
): Promise<RawResponse<DataOf<P, M>>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Blob | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(server.baseUrl + url, { method, headers, body });
  const text = await response.text();
  checkResponse({
    method,
    url,
    status: response.status,
    headers: Object.fromEntries(response.headers.entries()),
    body: text,
  });
  // A file (CSV, NDJSON) is read from `text`.
  const isJson = /^application\/([\w.-]+\+)?json/.test(response.headers.get("content-type") ?? "");
  const parsed = text === "" || !isJson ? undefined : JSON.parse(text);
  const isProblem = response.headers.get("content-type")?.startsWith("application/problem+json");
  return {
    status: response.status,
    headers: response.headers,
    text,
    data: response.ok ? parsed : undefined,
    problem: isProblem ? parsed : undefined,
  };
}
