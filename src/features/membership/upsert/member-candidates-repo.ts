import { Prisma } from "../../../../generated/prisma/client.ts";
import type { FieldType, FieldTypes } from "../../../domain/field-types.ts";
import { jsonRows } from "../../../platform/db/json-rows.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import { hidden, type NumberedMemberRow } from "../member-repo.ts";
import { declaredTypesSql, typesOf } from "../rules/field-type-repo.ts";
import { memberJson, type RuleRead, ruleMatchesJson, ruleReadOf } from "../rules/rule-repo.ts";

/**
 * What an upsert matches its inputs against (member-resolution.ts), read under the member lock:
 * nothing of it changes but under that lock.
 */
export interface Candidates {
  /** The members holding these e-mail keys, by key. */
  owners: Map<string, string>;
  /** The members of these ids and the owners, as writers read them. */
  rows: NumberedMemberRow[];
  /** The declared field types the inputs' values are checked with. */
  types: FieldTypes;
  /**
   * What following the candidates' change evaluates (ruleRepo.ruleMatches over them), when read
   * with them: an upsert's members that exist are among the candidates.
   */
  rules?: RuleRead | undefined;
}

/**
 * An upsert's candidates as one JSON text value (a scalar subquery), for the statement that takes
 * the member lock to read them too (membership-writer.ts readCandidates); candidatesOf reads it back.
 */
export const candidatesJson = (
  workspaceId: string,
  ids: string[],
  keys: string[],
  { rules = false }: { rules?: boolean } = {},
): Prisma.Sql => Prisma.sql`(
  WITH owners AS MATERIALIZED (
    SELECT e.email_key, e.member_id FROM ${jsonRows("v", { email_key: keys })}
    JOIN member_emails AS e ON e.workspace_id = ${hidden(workspaceId)} AND e.email_key = v.email_key
  ),
  named AS MATERIALIZED (SELECT v.id FROM ${jsonRows("v", { id: ids })} UNION SELECT member_id FROM owners)
  SELECT json_build_object(
    'owners', (SELECT json_agg(json_build_array(email_key, member_id)) FROM owners),
    'rows', (SELECT json_agg(${memberJson})
      FROM named JOIN members AS m ON m.workspace_id = ${hidden(workspaceId)} AND m.id = named.id),
    'types', ${declaredTypesSql(Prisma.sql`${workspaceId}`)},
    'rules', ${
      rules
        ? ruleMatchesJson(workspaceId, [], {
            seqsFrom: Prisma.sql`SELECT m.seq FROM named JOIN members AS m ON m.workspace_id = ${hidden(workspaceId)} AND m.id = named.id`,
          })
        : Prisma.sql`NULL`
    })::text)`;

/** candidatesJson's answer as the candidates they are. */
export function candidatesOf(json: string): Candidates {
  const read = JSON.parse(json) as {
    owners: [string, string][] | null;
    rows: NumberedMemberRow[] | null;
    types: Record<string, Exclude<FieldType, "string">>;
    rules: string | null;
  };
  return {
    owners: new Map(read.owners ?? []),
    rows: (read.rows ?? []).map((row) => ({ ...row, createdAt: new Date(row.createdAt) })),
    types: typesOf(read.types),
    ...(read.rules === null || read.rules === undefined ? {} : { rules: ruleReadOf(read.rules) }),
  };
}

export const memberCandidateRepo = {
  /** An upsert's candidates in a statement of their own (under a member lock already held). */
  async candidates(tx: SqlClient, workspaceId: string, ids: string[], keys: string[]): Promise<Candidates> {
    const [row] = await tx.$queryRaw<{ read: string }[]>`SELECT ${candidatesJson(workspaceId, ids, keys)} AS read`;
    return candidatesOf(row?.read ?? "{}");
  },
};

export type MemberCandidateRepo = typeof memberCandidateRepo;
