import { Prisma } from "../../../generated/prisma/client.ts";
import type { Store } from "../../platform/db/database.ts";
import { PLANNED_PER_RUN } from "../../platform/db/prepared-statements.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import { MEMBER_COLUMNS, type MemberRow } from "./member-repo.ts";
import type { Filter } from "./rules/filter.ts";
import { filterSql, type SqlContext } from "./rules/filter-sql.ts";
import { nodeCountsSql } from "./rules/node-counts-sql.ts";

/**
 * What a client's filter matches over a workspace's members, before it is any audience's rule
 * (previewAudience): reads only, over the members table as it stands.
 */
export const filterPreviewRepo = {
  /** How many members a filter matches, and the most recent of them. */
  async matching(
    db: SqlClient,
    workspaceId: string,
    filter: Filter,
    context: SqlContext,
    limit: number,
    options: { count?: boolean } = {},
  ) {
    const condition = filterSql(filter, context);
    // Without the count when the caller counts otherwise (nodeCounts counts the root too).
    const [count] =
      options.count === false
        ? [undefined]
        : await db.$queryRaw<{ total: number }[]>`
      SELECT count(*)::int AS total FROM members AS m WHERE m.workspace_id = ${workspaceId} AND ${condition}`;
    const rows = await db.$queryRaw<MemberRow[]>`
      SELECT ${MEMBER_COLUMNS} FROM members AS m WHERE m.workspace_id = ${workspaceId} AND ${condition}
      ORDER BY m.created_at DESC, m.id DESC LIMIT ${limit}`;
    return { totalCount: count?.total ?? 0, rows };
  },

  /** How many members every node of the filter matches (in filterNodes' order), in one scan. */
  async nodeCounts(
    db: SqlClient,
    workspaceId: string,
    filter: Filter,
    context: SqlContext,
    store: Store["kind"],
  ): Promise<number[]> {
    const [row] = await db.$queryRaw<{ counts: number[] }[]>`
      ${PLANNED_PER_RUN} ${nodeCountsSql(filter, context, Prisma.sql`m.workspace_id = ${workspaceId}`, store)}`;
    return row?.counts ?? [];
  },
};

export type FilterPreviewRepo = typeof filterPreviewRepo;
