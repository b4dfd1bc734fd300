import { describe, expect, it } from "vitest";
import { databaseFault, StoreBusyError, StoreTimeoutError } from "../../src/store/pg-errors.ts";

/** An error as Prisma's driver adapter raises it, with the cause it carries. */
const prismaError = (code: string, cause: Record<string, unknown>) =>
  Object.assign(new Error("Invalid `prisma.$queryRaw()` invocation"), {
    code,
    meta: { driverAdapterError: { cause } },
  });
const pgError = (code: string) => Object.assign(new Error("from PostgreSQL"), { code, severity: "ERROR" });

describe("databaseFault", () => {
  it.each([
    ["the server shutting down (57P01)", prismaError("P2010", { kind: "postgres", originalCode: "57P01" })],
    ["an unreachable server", prismaError("P2010", { kind: "DatabaseNotReachable", host: "127.0.0.1" })],
    ["a transaction that cannot reach it", prismaError("P1001", { kind: "DatabaseNotReachable" })],
    ["a closed connection", prismaError("P2010", { kind: "ConnectionClosed" })],
    ["statement_timeout (57014)", prismaError("P2010", { kind: "postgres", originalCode: "57014" })],
    ["a full disk (53100)", pgError("53100")],
    ["a connection exception (08006)", pgError("08006")],
    ["a refused socket", Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })],
    ["node-postgres's connect timeout", new Error("Connection terminated due to connection timeout")],
    ["node-postgres's pool timeout", new Error("timeout exceeded when trying to connect")],
    ["a statement past the client-side limit", new StoreTimeoutError("no answer")],
    [
      "a transaction that could not start (P2028)",
      Object.assign(new Error("Unable to start a transaction"), { code: "P2028" }),
    ],
  ])("calls %s unavailable", (_name, error) => {
    expect(databaseFault(error)).toBe("unavailable");
  });

  it.each([
    ["a full queue", new StoreBusyError("full")],
    [
      "a serialization failure that outlasted the retries",
      prismaError("P2010", { kind: "TransactionWriteConflict", originalCode: "40001" }),
    ],
    ["a lock timeout (55P03)", pgError("55P03")],
  ])("calls %s busy", (_name, error) => {
    expect(databaseFault(error)).toBe("busy");
  });

  it.each([
    ["a unique violation", prismaError("P2010", { kind: "UniqueConstraintViolation", originalCode: "23505" })],
    ["a division by zero", pgError("22012")],
    ["a bug", new TypeError("undefined is not a function")],
    ["not an error at all", "text"],
  ])("leaves %s alone (a 4xx or a 500, not the database's state)", (_name, error) => {
    expect(databaseFault(error)).toBeUndefined();
  });
});
