import { AsyncLocalStorage } from "node:async_hooks";
import type { SqlClient } from "./sql-client.ts";

/**
 * A read request's claim on the replicas (replica-reads.ts). Only the statements run inside one
 * may go to a replica: a write request, a write transaction, the background work (relay,
 * deliveries, imports, the clock) and the hooks before a handler (keys, rate limits,
 * idempotency) run outside any, so they read the primary without asking for it.
 */
export interface ReadScope {
  /**
   * The primary's position the client's last write left it at (its Consistency-Token); null
   * for a token that cannot be read, which only the primary can satisfy.
   */
  readonly after: bigint | null | undefined;
  /** Where this request's statements go, decided at its first statement and kept. */
  target?: Promise<unknown>;
}

const scopes = new AsyncLocalStorage<ReadScope>();

/** Runs a read request's handler with its statements free to go to a replica. */
export function readingFromReplicas<T>(token: string | undefined, fn: () => T): T {
  return scopes.run({ after: token === undefined ? undefined : parseToken(token) }, fn);
}

/** The read scope the caller runs in, if any. */
export const currentReadScope = (): ReadScope | undefined => scopes.getStore();

/**
 * The client with the caller's read scope kept for every statement, wherever it is later run
 * from: a streamed file reads its batches as the client takes it in, from the socket's events,
 * outside the request's asynchronous context.
 */
export function keepingReadScope(client: SqlClient): SqlClient {
  const scope = scopes.getStore();
  if (scope === undefined) return client;
  const inScope =
    <A extends unknown[], R>(method: (...args: A) => Promise<R>) =>
    (...args: A) =>
      scopes.run(scope, () => method(...args));
  return {
    $queryRaw: inScope(client.$queryRaw.bind(client)) as SqlClient["$queryRaw"],
    $queryRawUnsafe: inScope(client.$queryRawUnsafe.bind(client)) as SqlClient["$queryRawUnsafe"],
    $executeRaw: inScope(client.$executeRaw.bind(client)),
    $executeRawUnsafe: inScope(client.$executeRawUnsafe.bind(client)),
  };
}

// A token is the log position as 16 hexadecimal digits: opaque to clients, compared as a number here.
const TOKEN = /^[0-9A-F]{16}$/i;

/** PostgreSQL's text form of a log position (pg_lsn, "16/B374D848") as a number. */
export function parseLsn(text: string): bigint {
  const [high = "0", low = "0"] = text.split("/");
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

export const tokenOf = (lsn: bigint): string => lsn.toString(16).toUpperCase().padStart(16, "0");

export const parseToken = (token: string): bigint | null => (TOKEN.test(token) ? BigInt(`0x${token}`) : null);
