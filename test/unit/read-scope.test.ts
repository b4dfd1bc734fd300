import { describe, expect, it } from "vitest";
import {
  currentReadScope,
  keepingReadScope,
  parseLsn,
  parseToken,
  readingFromReplicas,
  tokenOf,
} from "../../src/platform/db/read-scope.ts";
import type { SqlClient } from "../../src/platform/db/sql-client.ts";

describe("the Consistency-Token", () => {
  it("is PostgreSQL's log position as 16 hexadecimal digits, ordered as the positions are", () => {
    expect(tokenOf(parseLsn("16/B374D848"))).toBe("00000016B374D848");
    expect(parseToken("00000016B374D848")).toBe(parseLsn("16/B374D848"));
    expect(parseLsn("0/3016060") > parseLsn("0/3015E48")).toBe(true);
    expect(parseLsn("1/0") > parseLsn("0/FFFFFFFF")).toBe(true);
  });

  it("is unreadable (null: only the primary satisfies it) when it is not such digits", () => {
    for (const token of ["", "16/B374D848", "00000016B374D84", "00000016B374D848A", "zzzzzzzzzzzzzzzz"]) {
      expect(parseToken(token)).toBeNull();
    }
  });
});

describe("the read scope", () => {
  it("holds the request's token while its handler runs, and none outside", async () => {
    expect(currentReadScope()).toBeUndefined();
    const seen = await readingFromReplicas("0000000003016060", async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return currentReadScope()?.after;
    });
    expect(seen).toBe(parseLsn("0/3016060"));
    expect(readingFromReplicas(undefined, () => currentReadScope()?.after)).toBeUndefined();
    expect(currentReadScope()).toBeUndefined();
  });

  it("stays with a client kept in it, wherever its statements are run from later", async () => {
    const scopes: unknown[] = [];
    const record = async () => scopes.push(currentReadScope()?.after);
    const client = {
      $queryRaw: record,
      $queryRawUnsafe: record,
      $executeRaw: record,
      $executeRawUnsafe: record,
    } as unknown as SqlClient;
    const kept = readingFromReplicas("0000000000000010", () => keepingReadScope(client));
    await kept.$queryRaw`SELECT 1`;
    await client.$queryRaw`SELECT 1`;
    expect(scopes).toEqual([16n, undefined]);
  });
});
