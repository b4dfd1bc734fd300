import type { SqlClient } from "../../../platform/db/sql-client.ts";

/** What a filter's cost is weighed against: the workspace's size, known without counting. */
export const filterCostRepo = {
  /**
   * The member numbers the workspace has handed out: its members, and those deleted since,
   * read from one row instead of counted. A scan reads no more members than this.
   */
  async memberNumbers(db: SqlClient, workspaceId: string): Promise<number> {
    const [row] = await db.$queryRaw<{ seq: number }[]>`
      SELECT member_seq AS seq FROM workspaces WHERE workspace_id = ${workspaceId}`;
    return Number(row?.seq ?? 0);
  },
};

export type FilterCostRepo = typeof filterCostRepo;
