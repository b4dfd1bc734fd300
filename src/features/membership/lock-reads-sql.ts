import { Prisma } from "../../../generated/prisma/client.ts";
import type { FieldType, FieldTypes } from "../../domain/field-types.ts";
import type { AudienceRow } from "./audience-repo.ts";
import { byIds } from "./member-repo.ts";
import { declaredTypesJson, typesOf } from "./rules/field-type-repo.ts";
import type { Filter } from "./rules/filter.ts";
import { namingAudiencesJson, type namingOf } from "./rules/rule-repo.ts";
import { type WriteLocks, writableOrRefused } from "./write-locks.ts";

// What a write's first statement reads beside the locks it takes (write-locks.ts readUnderMembers,
// writableReading), when it needs more than one repository's read: one JSON text value each, read
// back by its *Of function. Everything read so changes only under the member lock.

/**
 * namingAudiencesJson, the numbers of these members (of those that exist) and whether any
 * audience has a rule, as one JSON text value: the lock of an audience that members are added to
 * by id reads them (membership-writer.ts `writableWithSeqs`); namingAndSeqsOf reads it back.
 */
export const namingAndSeqsJson = (workspaceId: string, memberIds: string[]) => Prisma.sql`json_build_object(
  'naming', ${namingAudiencesJson(workspaceId)}::json,
  'seqs', (SELECT json_agg(json_build_array(m.id, m.seq)) FROM ${byIds(workspaceId, memberIds)}),
  'ruled', EXISTS (SELECT 1 FROM audiences WHERE workspace_id = ${workspaceId} AND filter IS NOT NULL))::text`;

export const namingAndSeqsOf = (json: string) => {
  const read = JSON.parse(json) as {
    naming: ReturnType<typeof namingOf>;
    seqs: [string, number][] | null;
    ruled: boolean;
  };
  return { naming: read.naming, seqs: new Map(read.seqs ?? []), ruled: read.ruled };
};

/**
 * ruleChangeJson's answer as what it is, with the rules as (id, filter)s and the member numbers
 * as a number.
 */
export const ruleChangeOf = (json: string) => {
  const read = JSON.parse(json) as {
    types: Record<string, Exclude<FieldType, "string">>;
    naming: ReturnType<typeof namingOf>;
    rules: [string, Filter][];
    members: number | null;
  };
  return {
    types: typesOf(read.types),
    naming: read.naming,
    rules: read.rules.map(([id, filter]) => ({ id, filter })),
    memberNumbers: Number(read.members ?? 0),
  };
};

/**
 * What a rule's change is checked against, as one JSON text value for the statement that takes the
 * member lock and the audience's: the declared field types, the rules that name audiences, every
 * rule (the workspace's bounds) and the member numbers handed out (a filter's cost).
 */
export const ruleChangeJson = (workspaceId: string) => Prisma.sql`json_build_object(
  'types', ${declaredTypesJson(workspaceId)}::json,
  'naming', ${namingAudiencesJson(workspaceId)}::json,
  'rules', (SELECT coalesce(json_agg(json_build_array(id, filter) ORDER BY id), '[]')
            FROM audiences WHERE workspace_id = ${workspaceId} AND filter IS NOT NULL),
  'members', (SELECT member_seq FROM workspaces WHERE workspace_id = ${workspaceId}))::text`;

/** What a rule's change is checked against (membership-writer-types.ts readRuleChange). */
export interface RuleChangeRead {
  types: FieldTypes;
  /** The audience, locked: 404 when there is none, 409 when it is archived. */
  writable(): AudienceRow;
  /** Every rule of the workspace; undefined when not read with the locks. */
  rules: { id: string; filter: Filter }[] | undefined;
  /** The member numbers the workspace has handed out; undefined when not read with the locks. */
  memberNumbers: number | undefined;
  /** The rules that name audiences; undefined when not read with the locks. */
  naming: ReturnType<typeof namingOf> | undefined;
}

/**
 * Locks the audience whose rule changes and reads what the change is checked against: with
 * `lockFirst`, in the member lock's statement; otherwise (the member lock held) the audience is
 * locked and the types read, the rest left to the caller.
 */
export async function ruleChangeRead(
  locks: WriteLocks,
  lockFirst: boolean,
  audienceId: string,
  read: { workspaceId: string; types: () => Promise<FieldTypes> },
): Promise<RuleChangeRead> {
  const alone = async (writable: () => AudienceRow) => ({
    types: await read.types(),
    writable,
    rules: undefined,
    memberNumbers: undefined,
    naming: undefined,
  });
  if (!lockFirst) {
    const row = await locks.audience(audienceId);
    return alone(() => writableOrRefused(audienceId, row));
  }
  const locked = await locks.writableReadingLater(audienceId, ruleChangeJson(read.workspaceId), { memberLock: true });
  if (locked.read === undefined) return alone(locked.writable);
  return { ...ruleChangeOf(locked.read), writable: locked.writable };
}
