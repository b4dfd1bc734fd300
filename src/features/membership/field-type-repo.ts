import type { FieldType, FieldTypes } from "../../domain/field-types.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";

/** The declared types of a workspace's custom fields (a field not declared is a string). */
export const fieldTypeRepo = {
  async types(db: SqlClient, workspaceId: string): Promise<FieldTypes> {
    const rows = await db.$queryRaw<{ key: string; type: FieldType }[]>`
      SELECT key, type FROM field_types WHERE workspace_id = ${workspaceId}`;
    return new Map(rows.map((row) => [row.key, row.type]));
  },
};

export type FieldTypeRepo = typeof fieldTypeRepo;
