// The raw baselines: the same rows, pages and set operations as the service's, written and read by
// single SQL statements through the driver (pg for PostgreSQL, PGlite in-process for the embedded
// store), against a fresh database with the service's own migrations applied.
import { createReadStream, openAsBlob } from "node:fs";
import { performance } from "node:perf_hooks";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";
import { Prisma } from "../../generated/prisma/client.ts";
import {
  bitOf,
  chunkOf,
  chunksOf,
  kind,
  type SetKind,
  storedBits,
  storedHas,
  takeStored,
} from "../../src/features/membership/member-bits-sql.ts";
import { applyMigrations, pgliteRunner, pgRunner } from "../../src/platform/db/migrate.ts";
import { openPglite } from "../../src/platform/db/pglite.ts";

export interface RawDb {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** COPY (select) TO STDOUT as CSV with a header, read to the end; returns its bytes. No parameters. */
  copyCsv(select: string): Promise<number>;
  /** COPY target FROM STDIN, a CSV file with a header; target is `table (columns)`. */
  copyCsvFrom(target: string, path: string): Promise<void>;
  close(): Promise<void>;
}

/** A connection to a database that already exists, with the service's migrations applied. */
export async function openPgRaw(url: string): Promise<RawDb> {
  // The same session settings as the service's connections.
  const pool = new pg.Pool({ connectionString: url, max: 1, options: "-c jit=off" });
  pool.on("error", () => {});
  await applyMigrations(pgRunner(pool));
  return {
    async query<T>(sql: string, params?: unknown[]) {
      return (await pool.query(sql, params)).rows as T[];
    },
    async copyCsv(select: string) {
      const client = await pool.connect();
      try {
        let bytes = 0;
        for await (const chunk of client.query(copyTo(`COPY (${select}) TO STDOUT WITH (FORMAT csv, HEADER)`))) {
          bytes += (chunk as Buffer).length;
        }
        return bytes;
      } finally {
        client.release();
      }
    },
    async copyCsvFrom(target: string, path: string) {
      const client = await pool.connect();
      try {
        const copy = copyFrom(`COPY ${target} FROM STDIN WITH (FORMAT csv, HEADER)`);
        await pipeline(createReadStream(path, { highWaterMark: 1 << 20 }), client.query(copy));
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** PGlite in this process, in dataDir, with the service's migrations applied. */
export async function openPgliteRaw(dataDir: string): Promise<RawDb> {
  const db = await openPglite(dataDir);
  await applyMigrations(pgliteRunner(db));
  return {
    async query<T>(sql: string, params?: unknown[]) {
      return (await db.query<T>(sql, params)).rows;
    },
    // PGlite writes what COPY sends to STDOUT into a Blob instead.
    async copyCsv(select: string) {
      const result = await db.query(`COPY (${select}) TO '/dev/blob' WITH (FORMAT csv, HEADER)`);
      return result.blob?.size ?? 0;
    },
    // …and reads what COPY takes from STDIN from a Blob (here backed by the file).
    async copyCsvFrom(target: string, path: string) {
      const blob = await openAsBlob(path);
      await db.query(`COPY ${target} FROM '/dev/blob' WITH (FORMAT csv, HEADER)`, [], { blob });
    },
    close: () => db.close(),
  };
}

/** Runs fn and returns how long it took, in milliseconds. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

export interface MemberWithData {
  id: string;
  email: string;
  fields: Record<string, string>;
  /** JSON of the folded form, computed the way the service computes it (foldMember). */
  folded: string;
}

/**
 * The service's own SQL pieces (src/features/membership/member-bits-sql.ts), so that both sides lay out chunks
 * alike. Only pieces without parameters fit into these statements, whose $n are numbered here.
 */
const shared = (piece: Prisma.Sql) => {
  if (piece.values.length > 0) throw new Error(`raw: a shared SQL piece has parameters: ${piece.text}`);
  return piece.text;
};

/** SQL: the bitset chunks (chunk, bits) of the member numbers `seqs` (a query of `seq`) yields. */
export const chunks = (seqs: string) => shared(chunksOf(Prisma.raw(seqs)));
export const kinds = (...k: SetKind[]) => k.map((x) => shared(kind(x))).join(", ");

/** SQL: a stored chunk's bits (member-bits-sql.ts storedBits), of the row aliased `alias`. */
export const stored = (alias: string) => shared(storedBits(alias));

/** SQL: sets the bits of the CTE `p` in the audience $2 of workspace $1, for one kind of set. */
const setBits = (k: SetKind) => `
  INSERT INTO membership_chunks AS t (workspace_id, audience_id, kind, chunk, bits)
  SELECT $1, $2, ${kinds(k)}, p.chunk, p.bits FROM p
  ON CONFLICT (workspace_id, audience_id, kind, chunk) DO UPDATE
  SET bits = ${stored("t")} | ${stored("EXCLUDED")}`;

/** SQL: the next `count` member numbers and a creation time from the workspace $1 (CTE `tick`). */
const tick = (count: string) => `tick AS (
  UPDATE workspaces SET member_seq = member_seq + ${count},
    member_clock = greatest(date_trunc('milliseconds', clock_timestamp()), member_clock + interval '1 millisecond')
  WHERE workspace_id = $1 RETURNING member_seq - ${count} AS first, member_clock AS at)`;

export const rawSql = {
  async workspace(db: RawDb, workspaceId: string): Promise<void> {
    await db.query(`INSERT INTO workspaces (workspace_id, name) VALUES ($1, $2)`, [workspaceId, workspaceId]);
  },

  async audience(db: RawDb, workspaceId: string, id: string, name: string): Promise<void> {
    await db.query(`INSERT INTO audiences (workspace_id, id, name, name_key) VALUES ($1, $2, $3, lower($3))`, [
      workspaceId,
      id,
      name,
    ]);
  },

  /** New members without data (ids in order), included in the audience: one statement. */
  async addNewMembers(db: RawDb, workspaceId: string, audienceId: string, ids: string[], foldedIds: string[]) {
    await db.query(
      `WITH ${tick("cardinality($3::text[])")},
       m AS (
         INSERT INTO members (workspace_id, id, seq, created_at, folded)
         SELECT $1, v.id, tick.first + v.n::int - 1, tick.at,
                jsonb_build_object('id', v.folded_id, 'email', NULL, 'emails', '[]'::jsonb, 'fields', '{}'::jsonb)
         FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS v(id, folded_id, n) CROSS JOIN tick
         RETURNING seq
       ),
       p AS (SELECT * FROM ${chunks("SELECT seq FROM m")} AS p),
       i AS (${setBits("include")})
       ${setBits("member")}`,
      [workspaceId, audienceId, ids, foldedIds],
    );
  },

  /**
   * Members with data, inserted or (on an existing id) overwritten, their e-mails claimed, and,
   * with an audience, included in it: one statement.
   */
  async upsertMembers(db: RawDb, workspaceId: string, audienceId: string | null, members: MemberWithData[]) {
    const include =
      audienceId === null
        ? `SELECT count(*) FROM up WHERE $2::text = ''`
        : `, p AS (SELECT * FROM ${chunks("SELECT seq FROM up")} AS p), i AS (${setBits("include")}) ${setBits("member")}`;
    await db.query(
      `WITH v AS (
         SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS v(id, email, fields, folded, n)
       ), ${tick("cardinality($3::text[])")},
       up AS (
         INSERT INTO members (workspace_id, id, seq, created_at, email, fields, folded)
         SELECT $1, v.id, tick.first + v.n::int - 1, tick.at, v.email, v.fields::jsonb, v.folded::jsonb FROM v CROSS JOIN tick
         ON CONFLICT (workspace_id, id) DO UPDATE
           SET email = EXCLUDED.email, fields = EXCLUDED.fields, folded = EXCLUDED.folded, updated_at = now()
         RETURNING seq
       ), em AS (
         INSERT INTO member_emails (workspace_id, email_key, member_id)
         SELECT $1, lower(v.email), v.id FROM v
         ON CONFLICT DO NOTHING
       ) ${include}`,
      [
        workspaceId,
        audienceId ?? "",
        members.map((m) => m.id),
        members.map((m) => m.email),
        members.map((m) => JSON.stringify(m.fields)),
        members.map((m) => m.folded),
      ],
    );
  },

  /** Existing members included in an audience: one statement. */
  async includeExisting(db: RawDb, workspaceId: string, audienceId: string, ids: string[]) {
    await db.query(
      `WITH p AS (SELECT * FROM ${chunks("SELECT seq FROM members WHERE workspace_id = $1 AND id = ANY($3::text[])")} AS p),
       i AS (${setBits("include")})
       ${setBits("member")}`,
      [workspaceId, audienceId, ids],
    );
  },

  /** The position (DESC order) just before row `depth` of the audience: the cursor of that page. */
  async positionBefore(db: RawDb, workspaceId: string, audienceId: string, depth: number) {
    const [row] = await db.query<{ created_at: Date; member_id: string }>(
      `SELECT m.created_at, m.id AS member_id FROM members AS m
       WHERE ${inAudience} ORDER BY m.created_at DESC, m.id DESC OFFSET $3 LIMIT 1`,
      [workspaceId, audienceId, depth - 1],
    );
    if (!row) throw new Error(`raw: no row at depth ${depth}`);
    return { createdAt: new Date(row.created_at), id: row.member_id };
  },

  /** One page of the audience's members, newest first, by keyset over the members index. */
  async page(
    db: RawDb,
    workspaceId: string,
    audienceId: string,
    after: { createdAt: Date; id: string } | null,
    limit: number,
  ) {
    const params: unknown[] = [workspaceId, audienceId, limit];
    let keyset = "";
    if (after) {
      params.push(after.createdAt.toISOString(), after.id);
      keyset = `AND (m.created_at, m.id) < ($4::timestamptz, $5::text)`;
    }
    return db.query<{ id: string }>(
      `SELECT m.id, m.created_at, m.email, m.fields, m.alternative_emails FROM members AS m
       WHERE ${inAudience} ${keyset}
       ORDER BY m.created_at DESC, m.id DESC
       LIMIT $3`,
      params,
    );
  },

  /**
   * The audience's members as one COPY to CSV: the columns of the service's CSV export (the
   * benchmark's members have no custom fields), oldest first; returns the bytes COPY wrote. The
   * members are joined to the audience's chunks, not looked up one by one (inAudience): read
   * whole, that is the plan PostgreSQL does best (a hash join, in parallel).
   */
  exportCsv(db: RawDb, workspaceId: string, audienceId: string) {
    const fields = ["firstName", "lastName", "role", "company"].map((key) => `m.fields->>'${key}' AS "${key}"`);
    return db.copyCsv(
      `SELECT m.id, m.email, array_to_string(m.alternative_emails, ';') AS "alternativeEmails", ${fields.join(", ")}
       FROM members AS m JOIN membership_chunks AS c ON c.workspace_id = m.workspace_id
         AND c.audience_id = ${literal(audienceId)} AND c.kind = ${kinds("member")}
         AND c.chunk = ${shared(chunkOf(Prisma.raw("m.seq")))}
       WHERE m.workspace_id = ${literal(workspaceId)} AND ${shared(storedHas("c", bitOf(Prisma.raw("m.seq"))))}
       ORDER BY m.created_at, m.id`,
    );
  },

  /** An audience's members copied into another as its includes and members: one statement. */
  async copyMembers(db: RawDb, workspaceId: string, targetId: string, sourceId: string) {
    await db.query(
      `INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits)
       SELECT $1, $2, k.kind, t.chunk, ${stored("t")} FROM membership_chunks AS t
       CROSS JOIN (VALUES (${kinds("include")}), (${kinds("member")})) AS k(kind)
       WHERE t.workspace_id = $1 AND t.audience_id = $3 AND t.kind = ${kinds("member")}`,
      [workspaceId, targetId, sourceId],
    );
  },

  /** The union of two audiences' includes, members and rule matches into a third: one statement. */
  async union(db: RawDb, workspaceId: string, targetId: string, sourceIds: string[]) {
    await db.query(
      `INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits)
       SELECT $1, $2, kind, chunk, bit_or(${stored("membership_chunks")}) FROM membership_chunks
       WHERE workspace_id = $1 AND audience_id = ANY($3::text[]) AND kind IN (${kinds("include", "member", "match")})
       GROUP BY kind, chunk`,
      [workspaceId, targetId, sourceIds],
    );
  },

  /**
   * Makes the audience hold exactly the workspace's members whose id ends with one of the digits
   * (the benchmark's rule), as its rule matches and its members: one statement.
   */
  async recomputeBySuffix(db: RawDb, workspaceId: string, audienceId: string, digits: string[]) {
    const put = (k: SetKind) => `
      INSERT INTO membership_chunks AS t (workspace_id, audience_id, kind, chunk, bits)
      SELECT $1, $2, ${kinds(k)}, r.chunk, r.bits FROM r
      ON CONFLICT (workspace_id, audience_id, kind, chunk) DO UPDATE SET ${shared(takeStored)}`;
    await db.query(
      `WITH r AS MATERIALIZED (
         SELECT * FROM ${chunks("SELECT seq FROM members AS m WHERE m.workspace_id = $1 AND right(m.folded->>'id', 1) = ANY($3::text[])")} AS r
       ),
       gone AS (
         DELETE FROM membership_chunks WHERE workspace_id = $1 AND audience_id = $2
           AND kind IN (${kinds("match", "member")}) AND chunk NOT IN (SELECT chunk FROM r)
       ),
       matched AS (${put("match")})
       ${put("member")}`,
      [workspaceId, audienceId, digits],
    );
  },
};

/**
 * SQL: member m of workspace $1 is in audience $2, its bit looked up in the audience's member
 * bitset for each member the scan reaches: walking the members index in page order, a dense
 * audience's page stops after about as many members as it returns. The bit is tested with `<> 0`,
 * not `= 1`: the planner has no statistics for an expression and guesses that `= 1` keeps 0.5% of
 * the workspace's members (`<> 0`: 99.5%). With `= 1`, a workspace of 2,000 members got a plan
 * that reads them all and sorts them (4.6 ms instead of 0.9 ms), in some runs and not others.
 */
const inAudience = `m.workspace_id = $1 AND get_bit((
  SELECT ${stored("c")} FROM membership_chunks AS c
  WHERE c.workspace_id = m.workspace_id AND c.audience_id = $2 AND c.kind = ${kinds("member")}
    AND c.chunk = ${shared(chunkOf(Prisma.raw("m.seq")))}
), ${shared(bitOf(Prisma.raw("m.seq")))}) <> 0`;

/** An id as an SQL literal, for COPY, which takes no parameters; the benchmark's ids are plain. */
export const literal = (id: string) => {
  if (!/^[\w-]+$/.test(id)) throw new Error(`raw: not a plain id: ${id}`);
  return `'${id}'`;
};
