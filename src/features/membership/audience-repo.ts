import { Prisma } from "../../../generated/prisma/client.ts";
import type { Position } from "../../domain/cursor.ts";
import { audienceNameTaken } from "../../domain/errors.ts";
import { isoOfMs } from "../../domain/iso-time.ts";
import { nameKey } from "../../domain/names.ts";
import { isUniqueViolation } from "../../platform/db/pg-errors.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import type { Filter } from "./rules/filter.ts";

/** An audience as listAudiences lists it. */
export interface AudienceListItem {
  id: string;
  /** As Date.prototype.toISOString writes it. */
  createdAt: string;
  name: string;
  isArchived: boolean;
}

/** What `include=stats` adds to an audience: its size, whether it has a rule, its last change. */
export interface AudienceStats {
  memberCount: number;
  hasRule: boolean;
  /** As Date.prototype.toISOString writes it. */
  updatedAt: string;
}

export interface AudienceRow {
  id: string;
  name: string;
  filter: Filter | null;
  isArchived: boolean;
  memberCount: number;
  createdAt: Date;
}

const NAME_INDEX = "audiences_workspace_id_name_key_key";

/** Turns the unique index on name_key into the contract's 409 audience_name_taken. */
async function guardName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, NAME_INDEX, ["workspace_id", "name_key"])) throw audienceNameTaken(name);
    throw error;
  }
}

// Stored filters were validated (parseFilter) before they were written.
const ROW = Prisma.sql`id, name, filter, is_archived AS "isArchived", member_count AS "memberCount", created_at AS "createdAt"`;

const filterJson = (filter: Filter | null | undefined) => (filter == null ? null : JSON.stringify(filter));

export const audienceRepo = {
  create(
    tx: SqlClient,
    audience: { workspaceId: string; id: string; name: string; filter?: Filter | null; memberCount?: number },
  ): Promise<AudienceRow> {
    const { workspaceId, id, name } = audience;
    return guardName(name, async () => {
      const [row] = await tx.$queryRaw<AudienceRow[]>`
        INSERT INTO audiences (workspace_id, id, name, name_key, filter, member_count)
        VALUES (${workspaceId}, ${id}, ${name}, ${nameKey(name)}, ${filterJson(audience.filter)}::jsonb,
                ${audience.memberCount ?? 0})
        RETURNING ${ROW}`;
      return row as AudienceRow;
    });
  },

  async find(db: SqlClient, workspaceId: string, id: string): Promise<AudienceRow | null> {
    const [row] = await db.$queryRaw<AudienceRow[]>`
      SELECT ${ROW} FROM audiences WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return row ?? null;
  },

  /** Only the id and name: getAudience's hot path. */
  async findName(db: SqlClient, workspaceId: string, id: string): Promise<{ id: string; name: string } | null> {
    const [row] = await db.$queryRaw<{ id: string; name: string }[]>`
      SELECT id, name FROM audiences WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return row ?? null;
  },

  /** The id and name with the stats (getAudience with include=stats), read fresh. */
  async findWithStats(
    db: SqlClient,
    workspaceId: string,
    id: string,
  ): Promise<({ id: string; name: string; isArchived: boolean } & AudienceStats) | null> {
    const [row] = await db.$queryRaw<
      { id: string; name: string; memberCount: number; hasRule: boolean; isArchived: boolean; updatedAt: Date }[]
    >`
      SELECT id, name, member_count AS "memberCount", filter IS NOT NULL AS "hasRule",
        is_archived AS "isArchived", updated_at AS "updatedAt"
      FROM audiences WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return row ? { ...row, updatedAt: row.updatedAt.toISOString() } : null;
  },

  /** Only the stored size, for a page of the audience's members. */
  async findCount(db: SqlClient, workspaceId: string, id: string): Promise<{ memberCount: number } | null> {
    const [row] = await db.$queryRaw<{ memberCount: number }[]>`
      SELECT member_count AS "memberCount" FROM audiences WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return row ?? null;
  },

  /**
   * The workspace's audiences in (createdAt, id) order, the ones after `after` when given, at most
   * `limit` (all without it), as listAudiences shows them. Only the listed columns: a listing of
   * 10,000 audiences does not carry their rules.
   */
  async list(
    db: SqlClient,
    workspaceId: string,
    options: {
      includeArchived: boolean;
      search?: string | undefined;
      sortDirection: "ASC" | "DESC";
      after?: Position | undefined;
      limit?: number | undefined;
      /** Also each audience's AudienceStats. */
      stats?: boolean | undefined;
    },
  ): Promise<(AudienceListItem & Partial<AudienceStats>)[]> {
    const ascending = options.sortDirection === "ASC";
    const direction = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
    const archived = options.includeArchived ? Prisma.empty : Prisma.sql`AND NOT is_archived`;
    // strpos, not LIKE: a search term's % and _ are ordinary characters.
    const search = options.search ? Prisma.sql`AND strpos(lower(name), lower(${options.search})) > 0` : Prisma.empty;
    const { after } = options;
    const keyset = after
      ? ascending
        ? Prisma.sql`AND (created_at, id) > (${after.createdAt}, ${after.id})`
        : Prisma.sql`AND (created_at, id) < (${after.createdAt}, ${after.id})`
      : Prisma.empty;
    const limit = options.limit === undefined ? Prisma.empty : Prisma.sql`LIMIT ${options.limit}`;
    // The rows as one JSON document (as member pages do): 10,000 rows converted column by column
    // on their way through the driver cost more than the query. Arrays, and the time as epoch
    // milliseconds (date_part is a float; extract's numeric costs more): building objects or
    // formatting times in SQL costs more than doing it here.
    const stats = options.stats
      ? Prisma.sql`, a.member_count, a.has_rule, round(date_part('epoch', a.updated_at) * 1000)`
      : Prisma.empty;
    const [row] = await db.$queryRaw<{ rows: string | null }[]>`
      SELECT json_agg(json_build_array(a.id, a.name, a.is_archived, round(date_part('epoch', a.created_at) * 1000) ${stats})
                      ORDER BY a.created_at ${direction}, a.id ${direction})::text AS rows
      FROM (
        SELECT id, name, is_archived, created_at${options.stats ? Prisma.sql`, member_count, filter IS NOT NULL AS has_rule, updated_at` : Prisma.empty}
        FROM audiences
        WHERE workspace_id = ${workspaceId} ${archived} ${search} ${keyset}
        ORDER BY created_at ${direction}, id ${direction}
        ${limit}
      ) AS a`;
    const rows = JSON.parse(row?.rows ?? "[]") as [string, string, boolean, number, number?, boolean?, number?][];
    return rows.map(([id, name, isArchived, createdAt, memberCount, hasRule, updatedAt]) => ({
      id,
      createdAt: isoOfMs(createdAt),
      name,
      isArchived,
      ...(options.stats
        ? {
            memberCount: memberCount as number,
            hasRule: hasRule as boolean,
            updatedAt: isoOfMs(updatedAt as number),
          }
        : {}),
    }));
  },

  /** Archives the audience and frees its name; false when there is no such audience. */
  async archive(tx: SqlClient, workspaceId: string, id: string): Promise<boolean> {
    const count = await tx.$executeRaw`
      UPDATE audiences
      SET is_archived = true, name_key = NULL, archived_at = COALESCE(archived_at, now()), updated_at = now()
      WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return count > 0;
  },

  async restore(tx: SqlClient, workspaceId: string, audience: { id: string; name: string }): Promise<void> {
    await guardName(
      audience.name,
      () => tx.$executeRaw`
        UPDATE audiences SET is_archived = false, archived_at = NULL, name_key = ${nameKey(audience.name)}, updated_at = now()
        WHERE workspace_id = ${workspaceId} AND id = ${audience.id}`,
    );
  },

  async rename(tx: SqlClient, workspaceId: string, audience: { id: string; name: string }): Promise<void> {
    await guardName(
      audience.name,
      () => tx.$executeRaw`
        UPDATE audiences SET name = ${audience.name}, name_key = ${nameKey(audience.name)}, updated_at = now()
        WHERE workspace_id = ${workspaceId} AND id = ${audience.id}`,
    );
  },

  /**
   * Stores the rule; the caller computes its matches in the same transaction (membershipRepo.recompute)
   * at `evaluatedAt`, the time its relative-time conditions are followed from (NULL: it has none).
   */
  async setFilter(
    tx: SqlClient,
    workspaceId: string,
    id: string,
    filter: Filter | null,
    evaluatedAt: Date | null,
  ): Promise<void> {
    await tx.$executeRaw`
      UPDATE audiences SET filter = ${filterJson(filter)}::jsonb, rule_outdated = false, updated_at = now(),
        evaluated_at = ${evaluatedAt}
      WHERE workspace_id = ${workspaceId} AND id = ${id}`;
  },

  /**
   * A merged audience's rule matches are up to date for relative time as of its earliest source:
   * it takes that source's evaluated_at, so the next tick covers the time since (rule-following.ts).
   */
  async inheritClock(tx: SqlClient, workspaceId: string, id: string, sourceIds: string[]): Promise<void> {
    await tx.$executeRaw`
      UPDATE audiences SET evaluated_at = (
        SELECT min(s.evaluated_at) FROM audiences AS s WHERE s.workspace_id = ${workspaceId} AND s.id = ANY(${sourceIds}::text[])
      )
      WHERE workspace_id = ${workspaceId} AND id = ${id}`;
  },

  /** Audiences whose rule matches must be computed again (after an upgrade), across workspaces. */
  listRuleOutdated(db: SqlClient): Promise<{ workspaceId: string; id: string }[]> {
    return db.$queryRaw`SELECT workspace_id AS "workspaceId", id FROM audiences WHERE rule_outdated`;
  },
};

export type AudienceRepo = typeof audienceRepo;
