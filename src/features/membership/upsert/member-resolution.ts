import { newId } from "../../../domain/ids.ts";
import {
  type MemberInput,
  type PlanOptions,
  planMemberUpserts,
  type UpsertPlan,
} from "../../../domain/member-identity.ts";
import { emailKeysOf, type MemberData, NAMED_FIELDS } from "../../../domain/member-merge.ts";
import type { SqlClient } from "../../../platform/db/sql-client.ts";
import type { MemberRepo, NumberedMemberRow } from "../member-repo.ts";
import { memberSetOf } from "../member-set.ts";
import { changedKeys, type OutboxEntry } from "../outbox-entries.ts";
import type { Candidates } from "./member-candidates-repo.ts";

export type MemberWrites = Pick<
  MemberRepo,
  "insert" | "findByIds" | "findEmailOwners" | "updateData" | "claimEmails" | "fieldTypes"
>;

export interface ResolvedMembers {
  memberIds: string[];
  /** The bare ids that named nobody, created as members with no data. */
  createdBare: string[];
  /** The member number of every member in memberIds and of every bare id. */
  seqs: number[];
  /** The same, by member id (an activity finds its member's number here). */
  seqOf: ReadonlyMap<string, number>;
  created: number;
  merged: number;
  /** Members created or whose data changed: the ones rule-based audiences must look at again. */
  changedIds: string[];
  outcomes: UpsertPlan["outcomes"];
  /** The inputs left out (with `rejectBadInputs`), by index, with why. */
  rejected: UpsertPlan["rejected"];
  /** The members.created and members.updated events of what was written. */
  events: OutboxEntry[];
  /** The data written for each member created or changed (the others are as they were read). */
  written: Map<string, MemberData>;
  /** With `deferUpdates`: the changed members' data, not yet written. */
  updates: { id: string; data: MemberData }[];
}

export interface ResolveOptions extends PlanOptions {
  /** Members the caller read in this transaction (under the member lock), not read again. */
  known?: NumberedMemberRow[];
  /**
   * Everything the inputs could match, read by the caller under the member lock (the writer's
   * readCandidates over candidatesOf(inputs)): nothing else is read before the plan.
   */
  candidates?: Candidates;
  /**
   * Leave the members' new data unwritten, returned in `updates` for the caller to write (a
   * member's edit writes it in the statement that moves its audiences: followMembers' `along`).
   * `types`, when given, are the field types the caller read under the member lock.
   */
  deferUpdates?: boolean;
  /**
   * The numbers of the bare ids that exist, read by the caller under the member lock: when every
   * bare id has one (and there are no inputs), nothing is written or read.
   */
  bareSeqs?: Map<string, number> | undefined;
}

const NAMED = new Set<string>(NAMED_FIELDS);

/** Whether an input sends a custom field a value (only those can break a declared type). */
const hasCustomValues = (inputs: MemberInput[]) =>
  inputs.some((input) => Object.entries(input.fields ?? {}).some(([key, value]) => value !== "" && !NAMED.has(key)));

/** The member ids and e-mail keys the inputs could match: what readCandidates reads. */
export function candidatesOfInputs(inputs: MemberInput[]): { ids: string[]; emailKeys: string[] } {
  const keys = new Set<string>();
  const ids = new Set<string>();
  for (const input of inputs) {
    if (input.id !== undefined) ids.add(input.id);
    for (const key of emailKeysOf({ email: input.email ?? null, alternativeEmails: input.alternativeEmails ?? [] })) {
      keys.add(key);
    }
  }
  return { ids: [...ids], emailKeys: [...keys] };
}

/** The events of a batch: the members it created (by number) and what changed of the others. */
function eventsOf(createdSeqs: number[], updated: { id: string; changed: string[] }[]): OutboxEntry[] {
  const events: OutboxEntry[] = [];
  if (createdSeqs.length > 0) events.push({ type: "members.created", created: memberSetOf(createdSeqs) });
  if (updated.length > 0) events.push({ type: "members.updated", members: updated });
  return events;
}

/**
 * Reads what the inputs could match, plans the upserts and writes them, inside the caller's
 * transaction (which holds the workspace's member lock). Bare ids that name nobody are created in
 * the same batch, so that every member a request creates has the same creation time.
 */
export async function resolveMemberInputs(
  members: MemberWrites,
  tx: SqlClient,
  workspaceId: string,
  inputs: MemberInput[],
  bareIds: string[] = [],
  options: ResolveOptions = {},
): Promise<ResolvedMembers> {
  if (inputs.length === 0) {
    const known = options.bareSeqs;
    const { createdBare, seqs } =
      known && bareIds.every((id) => known.has(id))
        ? { createdBare: [], seqs: new Map(bareIds.map((id) => [id, known.get(id) as number])) }
        : await members.insert(tx, workspaceId, [], bareIds);
    return {
      memberIds: [],
      createdBare,
      seqs: [...seqs.values()],
      seqOf: seqs,
      created: 0,
      merged: 0,
      changedIds: [],
      outcomes: [],
      rejected: [],
      written: new Map(),
      updates: [],
      events: eventsOf(
        createdBare.map((id) => seqs.get(id) as number),
        [],
      ),
    };
  }
  const { ids, emailKeys } = candidatesOfInputs(inputs);
  const read = options.candidates;
  const owners = read?.owners ?? (await members.findEmailOwners(tx, workspaceId, emailKeys));
  const candidateIds = new Set([...owners.values(), ...ids]);
  const known = options.known ?? [];
  for (const row of known) candidateIds.delete(row.id);
  const rows = read
    ? [...known, ...read.rows.filter((row) => candidateIds.has(row.id))]
    : [...known, ...(await members.findByIds(tx, workspaceId, [...candidateIds]))];
  const stored = new Map<string, MemberData>(
    rows.map((row) => [
      row.id,
      { email: row.email, fields: row.fields, alternativeEmails: row.alternativeEmails ?? [] },
    ]),
  );

  // Read under the member lock, which declareField takes too: no declaration changes meanwhile.
  const types =
    options.types ?? read?.types ?? (hasCustomValues(inputs) ? await members.fieldTypes(tx, workspaceId) : undefined);
  const plan = planMemberUpserts(inputs, stored, owners, () => newId("mem"), { ...options, types });
  const { createdBare, seqs } = await members.insert(tx, workspaceId, plan.create, bareIds);
  for (const row of rows) seqs.set(row.id, row.seq);
  if (!options.deferUpdates) await members.updateData(tx, workspaceId, plan.update);
  await members.claimEmails(tx, workspaceId, plan.claims);
  const createdIds = [...plan.create.map((m) => m.id), ...createdBare];
  const updated = plan.update.map((m) => ({ id: m.id, changed: changedKeys(stored.get(m.id) as MemberData, m.data) }));
  return {
    memberIds: plan.memberIds,
    createdBare,
    seqs: [...new Set([...plan.memberIds, ...bareIds].flatMap((id) => seqs.get(id) ?? []))],
    seqOf: seqs,
    created: plan.create.length,
    merged: plan.update.length,
    changedIds: [...plan.create, ...plan.update].map((m) => m.id),
    outcomes: plan.outcomes,
    rejected: plan.rejected,
    written: new Map([...plan.create, ...plan.update].map((m) => [m.id, m.data])),
    updates: options.deferUpdates ? plan.update : [],
    events: eventsOf(
      createdIds.map((id) => seqs.get(id) as number),
      updated,
    ),
  };
}
