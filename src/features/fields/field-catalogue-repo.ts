import type { SqlClient } from "../../platform/db/sql-client.ts";

/** A custom field as the members hold it: how many hold a value, and the smallest few values. */
export interface HeldField {
  key: string;
  memberCount: number;
  sampleValues: string[];
}

/** How many values of a field the catalogue shows. */
export const SAMPLE_VALUES = 3;

/** What the workspace's members hold, field by field (the catalogue's observed half). */
export const fieldCatalogueRepo = {
  /**
   * Every key some member holds a non-empty value of, read from the members as they are: exact,
   * at the cost of one pass over the workspace's members. Values compare by code point ("C"), so
   * both stores agree on which are the smallest.
   */
  held(db: SqlClient, workspaceId: string): Promise<HeldField[]> {
    return db.$queryRaw<HeldField[]>`
      SELECT f.key, count(*)::int AS "memberCount",
        (array_agg(DISTINCT f.value COLLATE "C" ORDER BY f.value COLLATE "C"))[1:${SAMPLE_VALUES}] AS "sampleValues"
      FROM members AS m CROSS JOIN LATERAL jsonb_each_text(m.fields) AS f(key, value)
      WHERE m.workspace_id = ${workspaceId} AND f.value <> ''
      GROUP BY f.key ORDER BY f.key COLLATE "C"`;
  },
};

export type FieldCatalogueRepo = typeof fieldCatalogueRepo;
