// The raw baselines: the same rows, pages and set operations as the service's, written and read by
// single SQL statements through the driver (pg for PostgreSQL, PGlite in-process for the embedded
// store), against a fresh database with the service's own migrations applied.
import { performance } from "node:perf_hooks";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { applyMigrations, pgliteRunner, pgRunner } from "../../src/store/migrate.ts";

export interface RawDb {
  readonly kind: "postgres" | "embedded";
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** A connection to a database that already exists, with the service's migrations applied. */
export async function openPgRaw(url: string): Promise<RawDb> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on("error", () => {});
  await applyMigrations(pgRunner(pool));
  return {
    kind: "postgres",
    async query<T>(sql: string, params?: unknown[]) {
      return (await pool.query(sql, params)).rows as T[];
    },
    close: () => pool.end(),
  };
}

/** PGlite in this process, in dataDir, with the service's migrations applied. */
export async function openPgliteRaw(dataDir: string): Promise<RawDb> {
  const db = await PGlite.create(dataDir);
  await applyMigrations(pgliteRunner(db));
  return {
    kind: "embedded",
    async query<T>(sql: string, params?: unknown[]) {
      return (await db.query<T>(sql, params)).rows;
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

  /** New members without data, included in the audience: one statement for the three tables. */
  async addNewMembers(db: RawDb, workspaceId: string, audienceId: string, ids: string[], foldedIds: string[]) {
    await db.query(
      `WITH m AS (
         INSERT INTO members (workspace_id, id, folded)
         SELECT $1, v.id, jsonb_build_object('id', v.folded_id, 'email', NULL, 'emails', '[]'::jsonb, 'fields', '{}'::jsonb)
         FROM unnest($3::text[], $4::text[]) AS v(id, folded_id)
         RETURNING id, created_at
       ), e AS (
         INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
         SELECT $1, $2, v.id, 'include' FROM unnest($3::text[]) AS v(id)
       )
       INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
       SELECT $1, $2, m.id, m.created_at FROM m`,
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
        : `, en AS (
             INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
             SELECT $1, $2, v.id, 'include' FROM v
             ON CONFLICT DO NOTHING
           )
           INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
           SELECT $1, $2, up.id, up.created_at FROM up
           ON CONFLICT DO NOTHING`;
    await db.query(
      `WITH v AS (
         SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS v(id, email, fields, folded)
       ), up AS (
         INSERT INTO members (workspace_id, id, email, fields, folded)
         SELECT $1, v.id, v.email, v.fields::jsonb, v.folded::jsonb FROM v
         ON CONFLICT (workspace_id, id) DO UPDATE
           SET email = EXCLUDED.email, fields = EXCLUDED.fields, folded = EXCLUDED.folded, updated_at = now()
         RETURNING id, created_at
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

  /** Existing members included in an audience: one statement for the two tables. */
  async includeExisting(db: RawDb, workspaceId: string, audienceId: string, ids: string[]) {
    await db.query(
      `WITH e AS (
         INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
         SELECT $1, $2, v.id, 'include' FROM unnest($3::text[]) AS v(id)
       )
       INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
       SELECT m.workspace_id, $2, m.id, m.created_at FROM members AS m
       WHERE m.workspace_id = $1 AND m.id = ANY($3::text[])`,
      [workspaceId, audienceId, ids],
    );
  },

  /** The position (DESC order) just before row `depth` of the audience: the cursor of that page. */
  async positionBefore(db: RawDb, workspaceId: string, audienceId: string, depth: number) {
    const [row] = await db.query<{ created_at: Date; member_id: string }>(
      `SELECT member_created_at AS created_at, member_id FROM audience_members
       WHERE workspace_id = $1 AND audience_id = $2
       ORDER BY member_created_at DESC, member_id DESC OFFSET $3 LIMIT 1`,
      [workspaceId, audienceId, depth - 1],
    );
    if (!row) throw new Error(`raw: no row at depth ${depth}`);
    return { createdAt: new Date(row.created_at), id: row.member_id };
  },

  /** One page of the audience's members, newest first, by keyset. */
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
      keyset = `AND (am.member_created_at, am.member_id) < ($4::timestamptz, $5::text)`;
    }
    return db.query<{ id: string }>(
      `SELECT m.id, m.created_at, m.email, m.fields, m.alternative_emails
       FROM audience_members AS am
       JOIN members AS m ON m.workspace_id = am.workspace_id AND m.id = am.member_id
       WHERE am.workspace_id = $1 AND am.audience_id = $2 ${keyset}
       ORDER BY am.member_created_at DESC, am.member_id DESC
       LIMIT $3`,
      params,
    );
  },

  /** The union of two audiences' entries and members into a third: one statement. */
  async union(db: RawDb, workspaceId: string, targetId: string, sourceIds: string[]) {
    await db.query(
      `WITH e AS (
         INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
         SELECT DISTINCT workspace_id, $2, member_id, 'include'::entry_kind FROM audience_entries
         WHERE workspace_id = $1 AND audience_id = ANY($3::text[]) AND kind = 'include'
         ON CONFLICT DO NOTHING
       )
       INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
       SELECT DISTINCT workspace_id, $2, member_id, member_created_at FROM audience_members
       WHERE workspace_id = $1 AND audience_id = ANY($3::text[])
       ON CONFLICT DO NOTHING`,
      [workspaceId, targetId, sourceIds],
    );
  },

  /**
   * Makes the audience hold exactly the workspace's members whose id ends with one of the digits
   * (the benchmark's rule): one statement deleting those that left and inserting those that joined.
   */
  async recomputeBySuffix(db: RawDb, workspaceId: string, audienceId: string, digits: string[]) {
    await db.query(
      `WITH gone AS (
         DELETE FROM audience_members AS am
         USING members AS m
         WHERE am.workspace_id = $1 AND am.audience_id = $2
           AND m.workspace_id = am.workspace_id AND m.id = am.member_id
           AND NOT (right(m.folded->>'id', 1) = ANY($3::text[]))
       )
       INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
       SELECT m.workspace_id, $2, m.id, m.created_at FROM members AS m
       WHERE m.workspace_id = $1 AND right(m.folded->>'id', 1) = ANY($3::text[])
       ON CONFLICT DO NOTHING`,
      [workspaceId, audienceId, digits],
    );
  },
};
