import { Prisma } from "../../../../generated/prisma/client.ts";
import type { MemberRow } from "../member-repo.ts";

/**
 * A member of `members AS m` as one JSON array, for reading many rows as one json_agg document:
 * converting a hundred rows column by column on their way through the driver costs more than the
 * query itself.
 */
export const MEMBER_JSON = Prisma.sql`json_build_array(m.id, floor(extract(epoch FROM m.created_at) * 1000), m.email,
  m.fields, m.alternative_emails)`;

/** The members of a json_agg of MEMBER_JSON (null: no rows). */
export function membersOfJson(document: string | null): MemberRow[] {
  return (JSON.parse(document ?? "[]") as MemberJson[]).map(memberOfJson);
}

/** One MEMBER_JSON array. */
export type MemberJson = [string, number, string | null, Record<string, string>, string[] | null];

export const memberOfJson = ([id, createdAt, email, fields, alternativeEmails]: MemberJson): MemberRow => ({
  id,
  createdAt: new Date(createdAt),
  email,
  fields,
  alternativeEmails: alternativeEmails ?? [],
});
