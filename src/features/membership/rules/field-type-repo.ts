import { Prisma } from "../../../../generated/prisma/client.ts";
import type { FieldType, FieldTypes } from "../../../domain/field-types.ts";
import { fitsType } from "../../../domain/field-types.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import { dropMemberDates, fillMemberDates } from "./member-dates-sql.ts";

/** A declared field as field_types stores it (a string field has no row). */
export interface FieldTypeRow {
  key: string;
  type: Exclude<FieldType, "string">;
  createdAt: Date;
}

/** The members whose stored value of a field does not parse as a type. */
export interface MisfitValues {
  count: number;
  /** The first of them by member number, at most `sample`. */
  memberIds: string[];
  /** The same members with their e-mail and the value that does not parse: what a person corrects. */
  misfits: { memberId: string; email: string | null; value: string }[];
}

/**
 * Values are read a page at a time and checked in process with fitsType, the same function that
 * checks every write: a second definition of "parses as a number" in SQL could disagree with it at
 * the edges (exponents, leap days, offsets), and an audience's rule relies on every stored value
 * of a declared field parsing.
 */
const PAGE = 5_000;

/**
 * A workspace's declared types as one JSON object, key to type, for a statement that reads them
 * beside other things (SQL over a workspace id expression); typesOf reads it back.
 */
export const declaredTypesSql = (workspaceId: Prisma.Sql) => Prisma.sql`(
  SELECT coalesce(jsonb_object_agg(t.key, t.type), '{}'::jsonb) FROM field_types AS t WHERE t.workspace_id = ${workspaceId})`;

/**
 * The same as JSON text, for the statement of the member lock that a rule's change reads them with
 * (membership-writer.ts readFieldTypes); typesOf(JSON.parse(…)) reads it back.
 */
export const declaredTypesJson = (workspaceId: string) =>
  Prisma.sql`(${declaredTypesSql(Prisma.sql`${workspaceId}`)}::text)`;

export const typesOf = (declared: Record<string, Exclude<FieldType, "string">>): FieldTypes =>
  new Map(Object.entries(declared));

/** The declared types of a workspace's custom fields (src/domain/field-types.ts). */
export const fieldTypeRepo = {
  /** The declared fields, by key. */
  list(db: SqlClient, workspaceId: string): Promise<FieldTypeRow[]> {
    return db.$queryRaw<FieldTypeRow[]>`
      SELECT key, type, created_at AS "createdAt" FROM field_types
      WHERE workspace_id = ${workspaceId} ORDER BY key COLLATE "C"`;
  },

  /** The declared types as writes check them; a key not in the map is a string. */
  async types(db: SqlClient, workspaceId: string): Promise<FieldTypes> {
    const rows = await fieldTypeRepo.list(db, workspaceId);
    return new Map(rows.map((row) => [row.key, row.type]));
  },

  /** Declares (or changes) a field's type; its creation time is now. */
  async declare(
    tx: SqlClient,
    workspaceId: string,
    key: string,
    type: Exclude<FieldType, "string">,
  ): Promise<FieldTypeRow> {
    const [row] = await tx.$queryRaw<FieldTypeRow[]>`
      INSERT INTO field_types (workspace_id, key, type) VALUES (${workspaceId}, ${key}, ${type})
      ON CONFLICT (workspace_id, key) DO UPDATE SET type = excluded.type, created_at = excluded.created_at
      RETURNING key, type, created_at AS "createdAt"`;
    // member_dates follows the declaration: filled for a date, emptied for any other type.
    await tx.$executeRaw(dropMemberDates(workspaceId, key));
    if (type === "date") await tx.$executeRaw(fillMemberDates(workspaceId, key));
    return row as FieldTypeRow;
  },

  /** Removes a field's declaration (it is a string again); whether there was one. */
  async remove(tx: SqlClient, workspaceId: string, key: string): Promise<boolean> {
    const removed = await tx.$executeRaw`DELETE FROM field_types WHERE workspace_id = ${workspaceId} AND key = ${key}`;
    await tx.$executeRaw(dropMemberDates(workspaceId, key));
    return removed > 0;
  },

  /**
   * Of `keys`, those with no declared type that no member holds a non-empty value of: a condition
   * on one matches as a field every member lacks, most likely a misspelled key. Two probes per key
   * (field_catalogue is kept by the member writes: migration 20261212100000_field_catalogue).
   */
  async unheld(db: SqlClient, workspaceId: string, keys: string[]): Promise<string[]> {
    if (keys.length === 0) return [];
    const rows = await db.$queryRaw<{ key: string }[]>`
      SELECT k.key FROM unnest(${keys}::text[]) AS k(key)
      WHERE NOT EXISTS (SELECT 1 FROM field_types AS t WHERE t.workspace_id = ${workspaceId} AND t.key = k.key)
        AND NOT EXISTS (SELECT 1 FROM field_catalogue AS c WHERE c.workspace_id = ${workspaceId} AND c.key = k.key)`;
    return rows.map((row) => row.key);
  },

  /**
   * The members whose non-empty value of `key` does not parse as `type`: how many, and the first
   * `sample` of them. Keyset pages by member number; the caller holds the workspace's member lock,
   * so no write changes the values meanwhile.
   */
  async misfits(tx: SqlClient, workspaceId: string, key: string, type: FieldType, sample = 10): Promise<MisfitValues> {
    const found: MisfitValues = { count: 0, memberIds: [], misfits: [] };
    let after = -1;
    for (;;) {
      const rows = await tx.$queryRaw<{ id: string; seq: number; email: string | null; value: string }[]>`
        SELECT m.id, m.seq, m.email, m.fields ->> ${key} AS value FROM members AS m
        WHERE m.workspace_id = ${workspaceId} AND m.seq > ${after} AND m.fields ->> ${key} <> ''
        ORDER BY m.seq LIMIT ${PAGE}`;
      for (const row of rows) {
        if (fitsType(type, row.value)) continue;
        found.count += 1;
        if (found.memberIds.length >= sample) continue;
        found.memberIds.push(row.id);
        found.misfits.push({ memberId: row.id, email: row.email, value: row.value });
      }
      if (rows.length < PAGE) return found;
      after = (rows[rows.length - 1] as { seq: number }).seq;
    }
  },
};

export type FieldTypeRepo = typeof fieldTypeRepo;
