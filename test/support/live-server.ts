import { randomBytes } from "node:crypto";
import pg from "pg";
import { buildApp } from "../../src/app.ts";
import { openStore, type Store } from "../../src/store/database.ts";
import { checkResponse } from "./contract.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

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
}

export async function startLiveServer(options: LiveServerOptions = {}): Promise<LiveServer> {
  const database =
    options.databaseUrl === undefined && process.env.TEST_DATABASE_URL
      ? await createDatabase(process.env.TEST_DATABASE_URL)
      : undefined;
  const databaseUrl = options.databaseUrl ?? database?.url;
  const store = await openStore({ databaseUrl, poolSize: 5 });
  const app = await buildApp({
    store,
    adminToken: ADMIN_TOKEN,
    // The production default limit, so every API test runs with rate limiting on.
    rateLimit: { max: 6000, windowMs: 60_000 },
    audienceCacheTtlMs: options.audienceCacheTtlMs,
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

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string | undefined;
  body?: unknown;
  /** Sent as is, instead of body. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/**
 * Sends one request and checks the response against the contract (status, media type, schema)
 * before any assertion of the test sees it.
 */
export async function call<T = any>(
  server: LiveServer,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(server.baseUrl + path, { method, headers, body });
  const text = await response.text();
  checkResponse({
    method,
    url: path,
    status: response.status,
    headers: Object.fromEntries(response.headers.entries()),
    body: text,
  });
  const parsed = text === "" ? undefined : JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}
