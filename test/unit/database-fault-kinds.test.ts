import { DriverAdapterError } from "@prisma/driver-adapter-utils";
import { describe, expect, it } from "vitest";
import { databaseFault, StoreBusyError, StoreTimeoutError } from "../../src/platform/db/pg-errors.ts";

/** An error as Prisma's driver adapter raises it (src/platform/db/sql-client.ts passes it on as it is). */
const adapterError = (cause: Record<string, unknown>) =>
  new DriverAdapterError(cause as unknown as ConstructorParameters<typeof DriverAdapterError>[0]);
const pgError = (code: string) => Object.assign(new Error("from PostgreSQL"), { code, severity: "ERROR" });

describe("databaseFault", () => {
  it.each([
    ["the server shutting down (57P01)", adapterError({ kind: "postgres", originalCode: "57P01" })],
    ["an unreachable server", adapterError({ kind: "DatabaseNotReachable", host: "127.0.0.1" })],
    ["a socket that timed out", adapterError({ kind: "SocketTimeout" })],
    ["a closed connection", adapterError({ kind: "ConnectionClosed" })],
    ["statement_timeout (57014)", adapterError({ kind: "postgres", originalCode: "57014" })],
    ["a full disk (53100)", pgError("53100")],
    ["a connection exception (08006)", pgError("08006")],
    ["a refused socket", Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })],
    ["node-postgres's connect timeout", new Error("Connection terminated due to connection timeout")],
    ["node-postgres's pool timeout", new Error("timeout exceeded when trying to connect")],
    ["a statement past the client-side limit", new StoreTimeoutError("no answer")],
    ["a server out of connections", adapterError({ kind: "TooManyConnections", cause: "too many clients" })],
  ])("calls %s unavailable", (_name, error) => {
    expect(databaseFault(error)).toBe("unavailable");
  });

  it.each([
    ["a full queue", new StoreBusyError("full")],
    [
      "a serialization failure that outlasted the retries",
      adapterError({ kind: "TransactionWriteConflict", originalCode: "40001" }),
    ],
    ["a lock timeout (55P03)", pgError("55P03")],
  ])("calls %s busy", (_name, error) => {
    expect(databaseFault(error)).toBe("busy");
  });

  it.each([
    ["a unique violation", adapterError({ kind: "UniqueConstraintViolation", originalCode: "23505" })],
    ["a division by zero", pgError("22012")],
    ["a bug", new TypeError("undefined is not a function")],
    ["not an error at all", "text"],
  ])("leaves %s alone (a 4xx or a 500, not the database's state)", (_name, error) => {
    expect(databaseFault(error)).toBeUndefined();
  });
});
