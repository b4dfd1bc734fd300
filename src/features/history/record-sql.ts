import { Prisma } from "../../../generated/prisma/client.ts";
import { CHUNK_BITS, CHUNK_SHIFT } from "../membership/member-bits-sql.ts";

// The pieces of record-repo.ts's statements.

/** The member's row by number: the member, or the record of its deletion. */
export const memberOf = (workspaceId: string, seq: Prisma.Sql) => Prisma.sql`
  LEFT JOIN members AS m ON m.workspace_id = ${workspaceId} AND m.seq = ${seq}
  LEFT JOIN deleted_members AS d ON d.workspace_id = ${workspaceId} AND d.seq = ${seq} AND m.id IS NULL`;

export const SHIFT = Prisma.raw(String(CHUNK_SHIFT));
export const BIT = Prisma.raw(String(CHUNK_BITS - 1));

/**
 * Whether a chunk `bits` (SQL) has members at or before member number `cursor` in the order
 * walked (at or below it ascending, at or above it descending): the bits on that side counted.
 */
export const anyBehindIn = (bits: Prisma.Sql, ascending: boolean, cursor: number) => {
  const bit = cursor & (CHUNK_BITS - 1);
  return ascending
    ? Prisma.sql`bit_count(substring(${bits} FROM 1 FOR ${bit + 1}::int)) > 0`
    : Prisma.sql`bit_count(substring(${bits} FROM ${bit + 1}::int)) > 0`;
};

/** The latest row of the record at chunk `chunk` before `before` (SQL), as a LATERAL's body. */
export const latestBefore = (
  workspaceId: string,
  audienceId: Prisma.Sql,
  chunk: Prisma.Sql,
  before: Prisma.Sql,
) => Prisma.sql`
  SELECT r.members, r.entered, r.reason, r.at FROM membership_record AS r
  WHERE r.workspace_id = ${workspaceId} AND r.audience_id = ${audienceId} AND r.chunk = ${chunk} AND r.at < ${before}`;
