import type { SqlQuery } from "@prisma/driver-adapter-utils";
import { describe, expect, it } from "vitest";
import {
  MAX_NAMED_STATEMENTS,
  PLANNED_PER_RUN,
  preparedStatements,
} from "../../src/platform/db/prepared-statements.ts";

const query = (sql: string, args: unknown[] = [1]): SqlQuery => ({
  sql,
  args,
  argTypes: args.map(() => ({ scalarType: "int", arity: "scalar" })),
});
const poolerError = (code: string) => ({ name: "DriverAdapterError", cause: { kind: "postgres", originalCode: code } });

describe("statement names", () => {
  it("are one per text, the same in every process, and only for statements with parameters", () => {
    const names = preparedStatements(true);
    const name = names.nameOf(query("SELECT $1::int"));
    expect(name).toMatch(/^s_[0-9a-f]{40}$/);
    expect(preparedStatements(true).nameOf(query("SELECT $1::int"))).toBe(name);
    expect(names.nameOf(query("SELECT $1::text"))).not.toBe(name);
    expect(names.nameOf(query("BEGIN; SET LOCAL jit = off", []))).toBeUndefined();
  });

  it("are not given to statements planned per run, to any when turned off, or past the limit", () => {
    const names = preparedStatements(true);
    expect(names.nameOf(query(`SELECT $1::int WHERE ${PLANNED_PER_RUN.text} true`))).toBeUndefined();
    expect(preparedStatements(false).nameOf(query("SELECT $1::int"))).toBeUndefined();
    for (let n = 0; n < MAX_NAMED_STATEMENTS; n++) expect(names.nameOf(query(`SELECT $1::int + ${n}`))).toBeDefined();
    expect(names.nameOf(query("SELECT $1::int - 1"))).toBeUndefined();
    // Those named before the limit keep their names.
    expect(names.nameOf(query("SELECT $1::int + 7"))).toBeDefined();
  });

  it("stop for good at the first statement a connection did not keep, and only then", () => {
    const told: unknown[] = [];
    const names = preparedStatements(true, (error) => told.push(error));
    expect(names.lostOn(poolerError("23505"))).toBe(false);
    expect(names.lostOn(new Error("Connection terminated"))).toBe(false);
    expect(names.nameOf(query("SELECT $1::int"))).toBeDefined();
    expect(names.lostOn(poolerError("26000"))).toBe(true);
    expect(names.lostOn(poolerError("42P05"))).toBe(true);
    expect(told).toEqual([poolerError("26000")]);
    expect(names.nameOf(query("SELECT $1::int"))).toBeUndefined();
  });

  it("run a statement once more when its connection did not keep it, and fail on anything else", async () => {
    const names = preparedStatements(true);
    const seen: (string | undefined)[] = [];
    const failures = [poolerError("26000")];
    const queryable = names.retrying({
      provider: "postgres",
      adapterName: "fake",
      async queryRaw(q) {
        seen.push(names.nameOf(q));
        const failure = failures.shift();
        if (failure) throw failure;
        return { columnNames: ["n"], columnTypes: [], rows: [[1]] };
      },
      executeRaw: async () => {
        throw poolerError("23505");
      },
    });
    expect((await queryable.queryRaw(query("SELECT $1::int"))).rows).toEqual([[1]]);
    expect(seen).toEqual([expect.stringMatching(/^s_/), undefined]);
    await expect(queryable.executeRaw(query("DELETE FROM t WHERE id = $1"))).rejects.toEqual(poolerError("23505"));
  });
});
