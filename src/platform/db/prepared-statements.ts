import { createHash } from "node:crypto";
import type { SqlQuery, SqlQueryable } from "@prisma/driver-adapter-utils";
import { Prisma } from "../../../generated/prisma/client.ts";
import { sqlState } from "./pg-errors.ts";

/**
 * Put in a statement whose best plan depends on its parameters' values (a search term, a rule
 * over a whole workspace): it is sent unnamed and planned for each run's values. A prepared
 * statement may be run with a generic plan, made once for no value in particular.
 */
export const PLANNED_PER_RUN = Prisma.raw("/* planned per run */");
const MARK = PLANNED_PER_RUN.text;

/** Distinct statements a process names at most (each connection keeps those it ran). */
export const MAX_NAMED_STATEMENTS = 500;

// prepared statement "…" does not exist / already exists: the statement was prepared on another
// server connection than this one, which only a pooler in transaction (or statement) mode does.
const POOLER_STATES = new Set(["26000", "42P05"]);

export interface PreparedStatements {
  /** The name to prepare a statement under (PrismaPg's statementNameGenerator); undefined: unnamed. */
  nameOf(query: SqlQuery): string | undefined;
  /**
   * True when the error says that the connection does not keep what it prepared (the service is
   * behind a transaction pooler such as PgBouncer): from then on no statement is named, and what
   * failed can run again. False for any other error.
   */
  lostOn(error: unknown): boolean;
  /** The queryable, running a statement that failed that way once more (unnamed). */
  retrying(queryable: SqlQueryable): SqlQueryable;
}

/**
 * Prepared statements for the pg pools: a statement with parameters is named after its text, so
 * each connection parses it once and PostgreSQL may keep its plan; the statements with none
 * (BEGIN with its settings, COMMIT) stay simple queries. A name stands for one text wherever it
 * is prepared, so a statement run under its name is that text even on a connection it did not
 * prepare. `onLost` is told once, when naming stops.
 */
export function preparedStatements(enabled: boolean, onLost: (error: unknown) => void = () => {}): PreparedStatements {
  let naming = enabled;
  const names = new Map<string, string>();
  const lostOn = (error: unknown) => {
    if (!POOLER_STATES.has(sqlState(error) ?? "")) return false;
    if (naming) {
      naming = false;
      names.clear();
      onLost(error);
    }
    return true;
  };
  const again = async <R>(run: () => Promise<R>): Promise<R> => {
    try {
      return await run();
    } catch (error) {
      if (!lostOn(error)) throw error;
      return run();
    }
  };
  return {
    nameOf({ sql, args }) {
      if (!naming || args.length === 0) return undefined;
      const known = names.get(sql);
      if (known !== undefined) return known;
      if (names.size >= MAX_NAMED_STATEMENTS || sql.includes(MARK)) return undefined;
      const name = `s_${createHash("sha1").update(sql).digest("hex")}`;
      names.set(sql, name);
      return name;
    },
    lostOn,
    retrying: (queryable) => ({
      provider: queryable.provider,
      adapterName: queryable.adapterName,
      queryRaw: (query) => again(() => queryable.queryRaw(query)),
      executeRaw: (query) => again(() => queryable.executeRaw(query)),
    }),
  };
}
