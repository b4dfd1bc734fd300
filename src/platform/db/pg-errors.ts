import { StoreOpenError } from "./data-dir.ts";

/**
 * PostgreSQL failures as they reach us through Prisma's driver adapters (src/platform/db/sql-client.ts):
 * a DriverAdapterError whose cause holds the SQLSTATE and the constraint. What the adapter does not
 * recognise (a socket or pool failure, a client-side timeout) reaches us as the driver raised it.
 */
interface AdapterCause {
  kind?: string;
  originalCode?: string;
  originalMessage?: string;
  constraint?: { fields?: string[]; index?: string };
}

function adapterCause(error: unknown): AdapterCause | undefined {
  const adapterError = error as { name?: unknown; cause?: AdapterCause } | null;
  return adapterError?.name === "DriverAdapterError" ? adapterError.cause : undefined;
}

export function sqlState(error: unknown): string | undefined {
  return adapterCause(error)?.originalCode ?? (error as { code?: string } | null)?.code;
}

/** True for a unique violation on the named index (or, where the driver reports fields, on those columns). */
export function isUniqueViolation(error: unknown, index: string, fields?: string[]): boolean {
  const cause = adapterCause(error);
  if (cause?.originalCode !== "23505") return false;
  if (cause.originalMessage?.includes(`"${index}"`)) return true;
  if (cause.constraint?.index === index) return true;
  return fields !== undefined && cause.constraint?.fields?.join(",") === fields.join(",");
}

/** A failure another attempt of the same transaction can get past. */
export class RetryTransaction extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "RetryTransaction";
  }
}

export function isRetryable(error: unknown): boolean {
  if (error instanceof RetryTransaction) return true;
  const state = sqlState(error);
  // serialization_failure, deadlock_detected
  return state === "40001" || state === "40P01";
}

/** The store refused to queue another request: too many are already waiting for the database. */
export class StoreBusyError extends Error {
  override name = "StoreBusyError";
}

/** A statement did not answer within the client-side timeout, so its connection was closed. */
export class StoreTimeoutError extends Error {
  override name = "StoreTimeoutError";
}

// Driver-adapter error kinds that mean "no usable connection", whatever the SQL was.
const UNREACHABLE_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
  "TlsConnectionError",
]);
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);
// node-postgres raises these as plain Errors, with nothing but the message to tell them apart.
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|Query read timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Cannot use a pool after calling end|Connection ended)/;

/**
 * Whether the failure is the database's state rather than the request: "unavailable" when it is
 * unreachable, failing or too slow (SQLSTATE classes 08, 53, 57, 58; timeouts; closed sockets),
 * "busy" when it is saturated (a queue is full, a lock or a serialization conflict outlasted the
 * retries). Either way the client should retry later, and it must never look like a bad request
 * or a bad credential.
 */
export function databaseFault(error: unknown): "unavailable" | "busy" | undefined {
  if (error instanceof StoreBusyError) return "busy";
  if (error instanceof StoreTimeoutError) return "unavailable";
  // The embedded store could not open its directory again (pglite-recycling.ts).
  if (error instanceof StoreOpenError) return "unavailable";
  const cause = adapterCause(error);
  if (cause?.kind && UNREACHABLE_KINDS.has(cause.kind)) return "unavailable";
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && SOCKET_CODES.has(code)) return "unavailable";
  const state = sqlState(error);
  if (state === "40001" || state === "40P01" || state === "55P03") return "busy";
  if (state && /^(08|53|57|58)/.test(state)) return "unavailable";
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message === "string" && PG_CONNECTION_MESSAGES.test(message)) return "unavailable";
  const inner = (error as { cause?: unknown } | null)?.cause;
  return inner !== undefined && inner !== error ? databaseFault(inner) : undefined;
}
