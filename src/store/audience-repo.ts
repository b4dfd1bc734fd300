import { Prisma, type PrismaClient } from "../../generated/prisma/client.ts";
import type { Position } from "../domain/cursor.ts";
import { audienceNameTaken } from "../domain/errors.ts";
import type { Filter } from "../domain/filter.ts";
import { nameKey } from "../domain/names.ts";
import type { Tx } from "./database.ts";
import { isUniqueViolation } from "./pg-errors.ts";

type Reader = PrismaClient | Tx;

/** An audience as listAudiences lists it. */
export interface AudienceListItem {
  id: string;
  /** As Date.prototype.toISOString writes it. */
  createdAt: string;
  name: string;
  isArchived: boolean;
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
const asRow = (row: Omit<AudienceRow, "filter"> & { filter: unknown }): AudienceRow => row as AudienceRow;

const selectRow = { id: true, name: true, filter: true, isArchived: true, memberCount: true, createdAt: true } as const;

export const audienceRepo = {
  create(
    tx: Reader,
    audience: { workspaceId: string; id: string; name: string; filter?: Filter | null; memberCount?: number },
  ): Promise<AudienceRow> {
    const filter = audience.filter == null ? Prisma.DbNull : (audience.filter as Prisma.InputJsonValue);
    return guardName(audience.name, () =>
      tx.audience
        .create({ data: { ...audience, filter, nameKey: nameKey(audience.name) }, select: selectRow })
        .then(asRow),
    );
  },

  find(db: Reader, workspaceId: string, id: string): Promise<AudienceRow | null> {
    return db.audience
      .findUnique({ where: { workspaceId_id: { workspaceId, id } }, select: selectRow })
      .then((row) => (row === null ? null : asRow(row)));
  },

  /** Only the id and name, read without Prisma's query building: getAudience's hot path. */
  async findName(db: Reader, workspaceId: string, id: string): Promise<{ id: string; name: string } | null> {
    const [row] = await db.$queryRaw<{ id: string; name: string }[]>`
      SELECT id, name FROM audiences WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return row ?? null;
  },

  /** Only the stored size, for a page of the audience's members. */
  async findCount(db: Reader, workspaceId: string, id: string): Promise<{ memberCount: number } | null> {
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
    db: Reader,
    workspaceId: string,
    options: {
      includeArchived: boolean;
      search?: string | undefined;
      sortDirection: "ASC" | "DESC";
      after?: Position | undefined;
      limit?: number | undefined;
    },
  ): Promise<AudienceListItem[]> {
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
    const [row] = await db.$queryRaw<{ rows: string | null }[]>`
      SELECT json_agg(json_build_array(a.id, a.name, a.is_archived, round(date_part('epoch', a.created_at) * 1000))
                      ORDER BY a.created_at ${direction}, a.id ${direction})::text AS rows
      FROM (
        SELECT id, name, is_archived, created_at FROM audiences
        WHERE workspace_id = ${workspaceId} ${archived} ${search} ${keyset}
        ORDER BY created_at ${direction}, id ${direction}
        ${limit}
      ) AS a`;
    const rows = JSON.parse(row?.rows ?? "[]") as [string, string, boolean, number][];
    return rows.map(([id, name, isArchived, createdAt]) => ({
      id,
      createdAt: new Date(createdAt).toISOString(),
      name,
      isArchived,
    }));
  },

  /** Archives the audience and frees its name; false when there is no such audience. */
  async archive(tx: Reader, workspaceId: string, id: string): Promise<boolean> {
    const count = await tx.$executeRaw`
      UPDATE audiences
      SET is_archived = true, name_key = NULL, archived_at = COALESCE(archived_at, now()), updated_at = now()
      WHERE workspace_id = ${workspaceId} AND id = ${id}`;
    return count > 0;
  },

  restore(tx: Reader, workspaceId: string, audience: { id: string; name: string }): Promise<unknown> {
    return guardName(audience.name, () =>
      tx.audience.update({
        where: { workspaceId_id: { workspaceId, id: audience.id } },
        data: { isArchived: false, archivedAt: null, nameKey: nameKey(audience.name) },
      }),
    );
  },

  rename(tx: Reader, workspaceId: string, audience: { id: string; name: string }): Promise<unknown> {
    return guardName(audience.name, () =>
      tx.audience.update({
        where: { workspaceId_id: { workspaceId, id: audience.id } },
        data: { name: audience.name, nameKey: nameKey(audience.name) },
      }),
    );
  },

  /** Stores the rule; the caller computes its matches in the same transaction (membershipRepo.recompute). */
  async setFilter(tx: Tx, workspaceId: string, id: string, filter: Filter | null): Promise<void> {
    await tx.audience.update({
      where: { workspaceId_id: { workspaceId, id } },
      data: { filter: filter === null ? Prisma.DbNull : (filter as Prisma.InputJsonValue), ruleOutdated: false },
    });
  },

  /** Audiences whose rule matches must be computed again (after an upgrade), across workspaces. */
  listRuleOutdated(db: Reader): Promise<{ workspaceId: string; id: string }[]> {
    return db.audience.findMany({ where: { ruleOutdated: true }, select: { workspaceId: true, id: true } });
  },
};

export type AudienceRepo = typeof audienceRepo;
