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
   * Every key some member holds a non-empty value of, from field_catalogue and field_values,
   * which triggers on members keep in the same statement as every member write (migration
   * 20261212100000_field_catalogue): exact in any snapshot, and a probe of field_values' primary
   * key per field instead of a pass over every member. Values compare by code point ("C"), so
   * both stores agree on which are the smallest.
   */
  held(db: SqlClient, workspaceId: string): Promise<HeldField[]> {
    return db.$queryRaw<HeldField[]>`
      SELECT c.key, c.member_count AS "memberCount",
        ARRAY(SELECT v.value FROM field_values AS v WHERE v.workspace_id = c.workspace_id AND v.key = c.key
              ORDER BY v.value LIMIT ${SAMPLE_VALUES}) AS "sampleValues"
      FROM field_catalogue AS c
      WHERE c.workspace_id = ${workspaceId} ORDER BY c.key`;
  },
};

export type FieldCatalogueRepo = typeof fieldCatalogueRepo;
