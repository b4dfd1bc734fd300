import { Prisma } from "../../../generated/prisma/client.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import type { AudienceRow } from "./audience-repo.ts";

/**
 * The row locks writes take, held until their transaction ends. Which lock comes first is decided
 * in one place, src/features/membership/write-locks.ts; nothing else calls these.
 */
export const lockRepo = {
  /**
   * The workspace's member lock: its row, by incrementing its count of member writes (an UPDATE of
   * a column no index holds locks the row as FOR NO KEY UPDATE does, which leaves inserts that
   * reference the workspace free). Writes that create, change or delete members, evaluate a rule
   * over them, or lock several audiences take it first, so they run one at a time per workspace;
   * each one counts, which is what lets a read ride in the lock's statement (memberWritesReading).
   */
  async memberWrites(tx: SqlClient, workspaceId: string): Promise<void> {
    await tx.$executeRaw`UPDATE workspaces SET member_writes = member_writes + 1 WHERE workspace_id = ${workspaceId}`;
  },

  /**
   * The member lock, as `memberWrites`, and `alongside` (a scalar subquery) read in the same
   * statement: its answer, or undefined when it must be read again now that the lock is held.
   *
   * A statement reads in one snapshot, taken before the lock it may wait for: the increment waits
   * for the write holding the lock and then counts from that write's row (READ COMMITTED's
   * EvalPlanQual), while the rest of the statement still sees the rows as they were before. So the
   * read stands only when the count the snapshot saw is one below the one the increment returned:
   * no member write committed in between (a write that rolled back left the count as it was). Else
   * (only when member writes of the workspace run at once) it is not even run.
   */
  async memberWritesReading(tx: SqlClient, workspaceId: string, alongside: Prisma.Sql): Promise<string | undefined> {
    const [first] = await tx.$queryRaw<{ read: string | null }[]>`
      WITH ${memberLockSql(workspaceId)}
      SELECT ${readIfCurrent(alongside)} AS read
      FROM member_lock AS l JOIN workspaces AS s ON s.workspace_id = ${workspaceId}`;
    return first?.read ?? undefined;
  },

  /**
   * Reads the audiences and locks their rows: FOR UPDATE for a writer of the audience, FOR SHARE
   * for a reader that needs it stable (the sources of a merge). Rows are locked in id order.
   */
  async audiences(tx: SqlClient, workspaceId: string, ids: string[], mode: "update" | "share"): Promise<AudienceRow[]> {
    const sorted = [...new Set(ids)].sort();
    const lockClause = mode === "update" ? Prisma.sql`FOR UPDATE` : Prisma.sql`FOR SHARE`;
    return tx.$queryRaw<AudienceRow[]>`
      SELECT id, name, filter, is_archived AS "isArchived", member_count AS "memberCount", created_at AS "createdAt"
      FROM audiences
      WHERE workspace_id = ${workspaceId} AND id = ANY(${sorted}::text[])
      ORDER BY id
      ${lockClause}`;
  },

  /**
   * Locks one audience FOR UPDATE, as `audiences`, and reads `alongside` (a scalar subquery) in the
   * same statement: what the write reads next, when nothing it reads can change but under locks
   * the write holds already (write-locks.ts writableReading). With `memberLock`, the member lock
   * first (as memberWritesReading: `read` is undefined when it must be read again), then the
   * audience's: the audience's lock reads the member lock's count, so it is taken after it.
   */
  async audienceReading(
    tx: SqlClient,
    workspaceId: string,
    id: string,
    alongside: Prisma.Sql,
    memberLock = false,
  ): Promise<{ row: AudienceRow | undefined; read: string | undefined }> {
    const audience = (after: Prisma.Sql) => Prisma.sql`LEFT JOIN LATERAL (
        SELECT id, name, filter, is_archived AS "isArchived", member_count AS "memberCount", created_at AS "createdAt"
        FROM audiences WHERE workspace_id = ${workspaceId} AND id = ${id} ${after} FOR UPDATE
      ) AS a ON true`;
    const [first] = memberLock
      ? await tx.$queryRaw<(AudienceRow & { read: string | null })[]>`
        WITH ${memberLockSql(workspaceId)}
        SELECT a.id, a.name, a.filter, a."isArchived", a."memberCount", a."createdAt", ${readIfCurrent(alongside)} AS read
        FROM member_lock AS l JOIN workspaces AS s ON s.workspace_id = ${workspaceId}
        ${audience(Prisma.sql`AND l.member_writes IS NOT NULL`)}`
      : await tx.$queryRaw<(AudienceRow & { read: string | null })[]>`
        SELECT a.id, a.name, a.filter, a."isArchived", a."memberCount", a."createdAt", x.read
        FROM (SELECT ${alongside} AS read) AS x
        ${audience(Prisma.empty)}`;
    const read = first?.read ?? undefined;
    if (!first || first.id === null) return { row: undefined, read };
    const { read: _, ...row } = first;
    return { row, read };
  },

  /**
   * The same lock (FOR UPDATE, id order) as a query for a statement that writes these audiences:
   * membership-repo.ts runs it before that statement reads or writes anything (lockedFirst).
   */
  audiencesForUpdateSql(workspaceId: string, ids: string[]): Prisma.Sql {
    const sorted = [...new Set(ids)].sort();
    return Prisma.sql`
      SELECT id FROM audiences WHERE workspace_id = ${workspaceId} AND id = ANY(${sorted}::text[]) ORDER BY id FOR UPDATE`;
  },

  /** Locks every audience of the workspace, archived ones too, in id order; returns their ids. */
  async allAudiences(tx: SqlClient, workspaceId: string): Promise<string[]> {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM audiences WHERE workspace_id = ${workspaceId} ORDER BY id FOR UPDATE`;
    return rows.map((row) => row.id);
  },

  /** Locks the audience if its rule matches are still outdated (no other process refreshed them). */
  async ruleOutdated(
    tx: SqlClient,
    workspaceId: string,
    id: string,
  ): Promise<Pick<AudienceRow, "id" | "filter"> | undefined> {
    const [row] = await tx.$queryRaw<Pick<AudienceRow, "id" | "filter">[]>`
      SELECT id, filter FROM audiences WHERE workspace_id = ${workspaceId} AND id = ${id} AND rule_outdated FOR UPDATE`;
    return row;
  },
};

export type LockRepo = typeof lockRepo;

/** The member lock as a common table expression (member_lock): the count the increment returned. */
const memberLockSql = (workspaceId: string) => Prisma.sql`member_lock AS (
  UPDATE workspaces SET member_writes = member_writes + 1 WHERE workspace_id = ${workspaceId} RETURNING member_writes)`;

/**
 * `alongside` when no member write committed between the statement's snapshot (s, the workspace's
 * row as the snapshot holds it) and the member lock (l), else NULL without running it.
 */
const readIfCurrent = (alongside: Prisma.Sql) =>
  Prisma.sql`CASE WHEN l.member_writes = s.member_writes + 1 THEN ${alongside} END`;
