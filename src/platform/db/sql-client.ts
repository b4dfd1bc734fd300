import {
  type ArgType,
  type ColumnType,
  type SqlDriverAdapter,
  type SqlQuery,
  type SqlQueryable,
  type SqlResultSet,
  ColumnTypeEnum as T,
  type Transaction,
} from "@prisma/driver-adapter-utils";
import { Prisma } from "../../../generated/prisma/client.ts";

/**
 * What the repositories send their SQL through: Prisma's raw-query methods, with Prisma's
 * parameters and result values (int8 as bigint, timestamps as Date, json parsed), run on Prisma's
 * driver adapter (PrismaPg, PrismaPGlite) directly. Prisma's client put 60–120 µs of CPU on every
 * statement and about 500 µs on every interactive transaction, more than PostgreSQL's own time for
 * most of this service's statements; the adapter is where the statement meets the driver.
 */
export interface SqlClient {
  $queryRaw<R = unknown>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<R>;
  $queryRawUnsafe<R = unknown>(query: string, ...values: unknown[]): Promise<R>;
  $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<number>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

export function sqlClient(queryable: SqlQueryable): SqlClient {
  const statement = (query: TemplateStringsArray | Prisma.Sql, values: unknown[]) => {
    const sql = query instanceof Prisma.Sql ? query : new Prisma.Sql(query, values);
    return toQuery(sql.text, sql.values);
  };
  return {
    async $queryRaw<R>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) {
      return toRows(await queryable.queryRaw(statement(query, values))) as R;
    },
    async $queryRawUnsafe<R>(query: string, ...values: unknown[]) {
      return toRows(await queryable.queryRaw(toQuery(query, values))) as R;
    },
    $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) {
      return queryable.executeRaw(statement(query, values));
    },
    $executeRawUnsafe(query: string, ...values: unknown[]) {
      return queryable.executeRaw(toQuery(query, values));
    },
  };
}

/**
 * What a statement whose answer is not read starts with (withCommit). A comment: a store that
 * cannot pipeline (the embedded one) runs it as it is.
 */
export const SENT_WITH_COMMIT = "/* sent with COMMIT */";

/**
 * What a statement that commits its transaction starts with (committing). A comment: a store that
 * cannot pipeline runs it as it is, and commits when the transaction ends.
 */
export const COMMITTING = "/* committing */";

/** A statement with a mark in front (a comment the PostgreSQL pool reads, pg/pg-pools.ts). */
const marked = (mark: string, query: TemplateStringsArray | Prisma.Sql, values: unknown[]) => {
  const sql = query instanceof Prisma.Sql ? query : new Prisma.Sql(query, values);
  return Prisma.sql`${Prisma.raw(mark)} ${sql}`;
};

/**
 * The transaction's client for a statement whose answer nobody reads: on PostgreSQL it is
 * answered at once (0 rows) and sent in the pipeline of what follows it in the transaction (pg/
 * pg-pipeline.ts), before it: the COMMIT, in one round trip, or the next statement; its error is
 * theirs. On the embedded store it runs as it is. A ROLLBACK drops it.
 */
export function withCommit(tx: SqlClient): SqlClient {
  return { ...tx, $executeRaw: (query, ...values) => tx.$executeRaw(marked(SENT_WITH_COMMIT, query, values)) };
}

/**
 * The transaction's client for its last statement, when its answer is read: on PostgreSQL the
 * statement is sent with the COMMIT, in one round trip (pg/pg-pipeline.ts), and answers once the
 * transaction has committed (its error: nothing was committed); on the embedded store it runs as it
 * is, and the transaction commits when it ends. Nothing may be sent in the transaction after it
 * (on PostgreSQL a statement after it fails: its transaction is over), nor may the transaction's
 * function fail after it.
 */
export function committing(tx: SqlClient): SqlClient {
  return {
    ...tx,
    $queryRaw: (query, ...values) => tx.$queryRaw(marked(COMMITTING, query, values)),
    $executeRaw: (query, ...values) => tx.$executeRaw(marked(COMMITTING, query, values)),
  };
}

/**
 * Runs fn in one transaction on its own connection: COMMIT when fn resolves, ROLLBACK when it
 * throws (fn's error is what the caller hears of, not a failed ROLLBACK's). An adapter whose
 * driver ends transactions itself (PGlite's, "phantom" queries) is told to commit or roll back.
 */
export async function inTransaction<R>(adapter: SqlDriverAdapter, fn: (tx: SqlClient) => Promise<R>): Promise<R> {
  const tx = await adapter.startTransaction();
  let result: R;
  try {
    result = await fn(sqlClient(tx));
  } catch (error) {
    await rollback(tx).catch(() => {});
    throw error;
  }
  await commit(tx);
  return result;
}

const bare = (sql: string): SqlQuery => ({ sql, args: [], argTypes: [] });

async function commit(tx: Transaction): Promise<void> {
  if (tx.options.usePhantomQuery) return tx.commit();
  try {
    await tx.executeRaw(bare("COMMIT"));
  } catch (error) {
    await tx.rollback().catch(() => {});
    throw error;
  }
  await tx.commit();
}

async function rollback(tx: Transaction): Promise<void> {
  if (tx.options.usePhantomQuery) return tx.rollback();
  try {
    await tx.executeRaw(bare("ROLLBACK"));
  } finally {
    await tx.rollback();
  }
}

// Parameters as Prisma's client hands them to the adapter (serializeRawParameters, then
// deserializeRawParameters): bigints and dates as strings with their type, objects as JSON text,
// undefined as NULL; the adapter formats each for its driver.
function toQuery(sql: string, values: readonly unknown[]): SqlQuery {
  const args: unknown[] = [];
  const argTypes: ArgType[] = [];
  for (const value of values) {
    if (Array.isArray(value)) {
      args.push(value.map(toArg));
      argTypes.push({ scalarType: value.length > 0 ? scalarType(value[0]) : "unknown", arity: "list" });
    } else {
      args.push(toArg(value));
      argTypes.push({ scalarType: scalarType(value), arity: "scalar" });
    }
  }
  return { sql, args, argTypes };
}

function toArg(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError("Invalid Date given as a query parameter");
    return value.toJSON();
  }
  if (ArrayBuffer.isView(value))
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
  if (Array.isArray(value)) return value.map(toArg);
  if (typeof value === "object" && value !== null) {
    return JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  }
  return value;
}

function scalarType(value: unknown): ArgType["scalarType"] {
  if (typeof value === "bigint") return "bigint";
  if (value instanceof Date) return "datetime";
  if (ArrayBuffer.isView(value)) return "bytes";
  if (typeof value === "number") return "decimal";
  if (typeof value === "string") return "string";
  return "unknown";
}

// Result values as Prisma's client returns a raw query's (serializeRawSql, then
// deserializeRawResult), from what the adapter's type parsers made of them.
function toRows({ columnNames, columnTypes, rows }: SqlResultSet): Record<string, unknown>[] {
  const out = new Array<Record<string, unknown>>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as unknown[];
    const record: Record<string, unknown> = {};
    for (let j = 0; j < columnNames.length; j++) {
      record[columnNames[j] as string] = toValue(columnTypes[j] as ColumnType, row[j]);
    }
    out[i] = record;
  }
  return out;
}

function toValue(type: ColumnType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case T.Int32:
      return Math.trunc(Number(value));
    case T.Int64:
      return typeof value === "number" ? BigInt(Math.trunc(value)) : BigInt(value as string);
    case T.Numeric:
      return new Prisma.Decimal(value as string);
    case T.Boolean:
      return typeof value === "boolean" ? value : value === "true" || value === "1" || value === 1;
    case T.Json:
      return typeof value === "string" ? JSON.parse(value) : value;
    case T.Date:
    case T.DateTime:
      return new Date(value as string);
    case T.Time:
      return new Date(`1970-01-01T${value as string}Z`);
    case T.Bytes: // a copy, not a view into Node's shared buffer pool
      return new Uint8Array(Buffer.from(value as string, "base64"));
    case T.Int32Array:
    case T.Int64Array:
    case T.NumericArray:
    case T.BooleanArray:
    case T.JsonArray:
    case T.DateArray:
    case T.DateTimeArray:
    case T.TimeArray:
    case T.BytesArray:
      return (value as unknown[]).map((item) => toValue(ELEMENT[type] as ColumnType, item));
    default:
      return value;
  }
}

const ELEMENT: Record<number, ColumnType> = {
  [T.Int32Array]: T.Int32,
  [T.Int64Array]: T.Int64,
  [T.NumericArray]: T.Numeric,
  [T.BooleanArray]: T.Boolean,
  [T.JsonArray]: T.Json,
  [T.DateArray]: T.Date,
  [T.DateTimeArray]: T.DateTime,
  [T.TimeArray]: T.Time,
  [T.BytesArray]: T.Bytes,
};
