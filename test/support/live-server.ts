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
  close(): Promise<void>;
}

export async function startLiveServer(): Promise<LiveServer> {
  const database = process.env.TEST_DATABASE_URL ? await createDatabase(process.env.TEST_DATABASE_URL) : undefined;
  const store = await openStore({ databaseUrl: database?.url, poolSize: 5 });
  // The production default limit, so every API test runs with rate limiting on.
  const app = await buildApp({ store, adminToken: ADMIN_TOKEN, rateLimit: { max: 6000, windowMs: 60_000 } });
  const baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    baseUrl,
    store,
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
