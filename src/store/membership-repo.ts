import { Prisma, type PrismaClient } from "../../generated/prisma/client.ts";
import type { Filter } from "../domain/filter.ts";
import type { Tx } from "./database.ts";
import { filterSql } from "./filter-sql.ts";

/**
 * The audience_entries (manual include/exclude) and audience_members (materialized membership)
 * tables. Writers hold the audience row lock (audienceRepo.lock) and keep member_count in step.
 */
export const membershipRepo = {
  /** Writes include entries and makes the members part of the audience; returns how many joined. */
  async include(tx: Tx, workspaceId: string, audienceId: string, memberIds: string[]): Promise<number> {
    if (memberIds.length === 0) return 0;
    await tx.$executeRaw`
      INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
      SELECT ${workspaceId}, ${audienceId}, id, 'include' FROM unnest(${memberIds}::text[]) AS input(id)
      ON CONFLICT (workspace_id, audience_id, member_id)
      DO UPDATE SET kind = 'include', created_at = now() WHERE audience_entries.kind <> 'include'`;
    const [row] = await tx.$queryRaw<{ added: number }[]>`
      WITH added AS (
        INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
        SELECT m.workspace_id, ${audienceId}, m.id, m.created_at FROM members AS m
        WHERE m.workspace_id = ${workspaceId} AND m.id = ANY(${memberIds}::text[])
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*)::int AS added FROM added`;
    return row?.added ?? 0;
  },

  /**
   * Writes exclude entries for the existing members (so a rule cannot bring them back) and takes
   * them out of the audience; returns how many left it.
   */
  async exclude(tx: Tx, workspaceId: string, audienceId: string, memberIds: string[]): Promise<number> {
    await tx.$executeRaw`
      INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
      SELECT m.workspace_id, ${audienceId}, m.id, 'exclude' FROM members AS m
      WHERE m.workspace_id = ${workspaceId} AND m.id = ANY(${memberIds}::text[])
      ON CONFLICT (workspace_id, audience_id, member_id)
      DO UPDATE SET kind = 'exclude', created_at = now() WHERE audience_entries.kind <> 'exclude'`;
    const [row] = await tx.$queryRaw<{ removed: number }[]>`
      WITH removed AS (
        DELETE FROM audience_members
        WHERE workspace_id = ${workspaceId} AND audience_id = ${audienceId} AND member_id = ANY(${memberIds}::text[])
        RETURNING 1
      )
      SELECT count(*)::int AS removed FROM removed`;
    return row?.removed ?? 0;
  },

  /**
   * Gives the target the union of the sources' include entries and current members; returns the
   * target's resulting member count.
   */
  async copyUnion(tx: Tx, workspaceId: string, targetId: string, sourceIds: string[]): Promise<number> {
    await tx.$executeRaw`
      INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
      SELECT DISTINCT workspace_id, ${targetId}, member_id, 'include'::entry_kind FROM audience_entries
      WHERE workspace_id = ${workspaceId} AND audience_id = ANY(${sourceIds}::text[]) AND kind = 'include'
      ON CONFLICT DO NOTHING`;
    const [row] = await tx.$queryRaw<{ added: number }[]>`
      WITH added AS (
        INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
        SELECT DISTINCT workspace_id, ${targetId}, member_id, member_created_at FROM audience_members
        WHERE workspace_id = ${workspaceId} AND audience_id = ANY(${sourceIds}::text[])
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*)::int AS added FROM added`;
    return row?.added ?? 0;
  },

  /**
   * Makes the audience's members exactly include ∪ (filter ∧ ¬exclude) again, after its filter
   * changed: two set-based statements evaluated in the database (members that no longer belong
   * leave, members that now belong join). Returns how many joined and left.
   */
  async recompute(
    tx: Tx,
    workspaceId: string,
    audienceId: string,
    filter: Filter | null,
  ): Promise<{ added: number; removed: number }> {
    // Never NULL (a member without an entry has e.kind NULL), so NOT is its exact negation.
    const belongs = Prisma.sql`(coalesce(e.kind = 'include', false) OR (e.kind IS NULL AND ${filterSql(filter)}))`;
    const entryJoin = Prisma.sql`LEFT JOIN audience_entries AS e
      ON e.workspace_id = m.workspace_id AND e.audience_id = ${audienceId} AND e.member_id = m.id`;
    const [left] = await tx.$queryRaw<{ count: number }[]>`
      WITH removed AS (
        DELETE FROM audience_members AS am
        USING members AS m ${entryJoin}
        WHERE am.workspace_id = ${workspaceId} AND am.audience_id = ${audienceId}
          AND m.workspace_id = am.workspace_id AND m.id = am.member_id
          AND NOT ${belongs}
        RETURNING 1
      )
      SELECT count(*)::int AS count FROM removed`;
    const [joined] = await tx.$queryRaw<{ count: number }[]>`
      WITH added AS (
        INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
        SELECT m.workspace_id, ${audienceId}, m.id, m.created_at FROM members AS m ${entryJoin}
        WHERE m.workspace_id = ${workspaceId} AND ${belongs}
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*)::int AS count FROM added`;
    return { added: joined?.count ?? 0, removed: left?.count ?? 0 };
  },

  /**
   * Writes exclude entries for the members the filter matches that are not members of the
   * audience now, so that "include ∨ (filter ∧ ¬exclude)" describes its current members.
   */
  async excludeMatchesOutside(tx: Tx, workspaceId: string, audienceId: string, filter: Filter): Promise<void> {
    await tx.$executeRaw`
      INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind)
      SELECT m.workspace_id, ${audienceId}, m.id, 'exclude' FROM members AS m
      WHERE m.workspace_id = ${workspaceId} AND ${filterSql(filter)}
        AND NOT EXISTS (
          SELECT 1 FROM audience_members AS am
          WHERE am.workspace_id = m.workspace_id AND am.audience_id = ${audienceId} AND am.member_id = m.id)
      ON CONFLICT DO NOTHING`;
  },

  /** The manual entries and current memberships of these members in these audiences. */
  async stateOf(tx: Tx, workspaceId: string, audienceIds: string[], memberIds: string[]) {
    const entries = await tx.$queryRaw<{ audienceId: string; memberId: string; kind: "include" | "exclude" }[]>`
      SELECT audience_id AS "audienceId", member_id AS "memberId", kind::text AS kind FROM audience_entries
      WHERE workspace_id = ${workspaceId} AND member_id = ANY(${memberIds}::text[]) AND audience_id = ANY(${audienceIds}::text[])`;
    const current = await tx.$queryRaw<{ audienceId: string; memberId: string }[]>`
      SELECT audience_id AS "audienceId", member_id AS "memberId" FROM audience_members
      WHERE workspace_id = ${workspaceId} AND member_id = ANY(${memberIds}::text[]) AND audience_id = ANY(${audienceIds}::text[])`;
    return { entries, current };
  },

  async insertPairs(tx: Tx, workspaceId: string, pairs: { audienceId: string; memberId: string; createdAt: Date }[]) {
    if (pairs.length === 0) return;
    await tx.$executeRaw`
      INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
      SELECT ${workspaceId}, v.audience_id, v.member_id, v.created_at
      FROM unnest(${pairs.map((p) => p.audienceId)}::text[], ${pairs.map((p) => p.memberId)}::text[],
                  ${pairs.map((p) => p.createdAt.toISOString())}::timestamptz[]) AS v(audience_id, member_id, created_at)
      ON CONFLICT DO NOTHING`;
  },

  async deletePairs(tx: Tx, workspaceId: string, pairs: { audienceId: string; memberId: string }[]) {
    if (pairs.length === 0) return;
    await tx.$executeRaw`
      DELETE FROM audience_members AS am
      USING unnest(${pairs.map((p) => p.audienceId)}::text[], ${pairs.map((p) => p.memberId)}::text[]) AS v(audience_id, member_id)
      WHERE am.workspace_id = ${workspaceId} AND am.audience_id = v.audience_id AND am.member_id = v.member_id`;
  },

  /** How many of these members each audience holds (before they are deleted). */
  async countByAudience(tx: Tx, workspaceId: string, memberIds: string[]): Promise<Map<string, number>> {
    const rows = await tx.$queryRaw<{ audienceId: string; count: number }[]>`
      SELECT audience_id AS "audienceId", count(*)::int AS count FROM audience_members
      WHERE workspace_id = ${workspaceId} AND member_id = ANY(${memberIds}::text[])
      GROUP BY audience_id`;
    return new Map(rows.map((row) => [row.audienceId, row.count]));
  },

  /** The audiences a member belongs to, and whether by hand or by rule. */
  memberAudiences(tx: Tx | PrismaClient, workspaceId: string, memberId: string) {
    return tx.$queryRaw<{ id: string; name: string; isArchived: boolean; reason: "manual" | "rule" }[]>`
      SELECT a.id, a.name, a.is_archived AS "isArchived",
             CASE WHEN e.kind = 'include' THEN 'manual' ELSE 'rule' END AS reason
      FROM audience_members AS am
      JOIN audiences AS a ON a.workspace_id = am.workspace_id AND a.id = am.audience_id
      LEFT JOIN audience_entries AS e
        ON e.workspace_id = am.workspace_id AND e.audience_id = am.audience_id AND e.member_id = am.member_id
      WHERE am.workspace_id = ${workspaceId} AND am.member_id = ${memberId}
      ORDER BY a.created_at DESC, a.id DESC`;
  },
};
