import { type AppError, BadRequestError, ConflictError } from "./errors.ts";
import {
  emailKeysOf,
  emptyMemberData,
  type MemberData,
  type MemberDataInput,
  mergeMemberData,
} from "./member-merge.ts";

export interface MemberInput extends MemberDataInput {
  id?: string;
}

/** What applying a batch of member inputs must write. */
export interface UpsertPlan {
  /** The member each input resolved to, in input order, without repeats. */
  memberIds: string[];
  create: { id: string; data: MemberData }[];
  update: { id: string; data: MemberData }[];
  /** Addresses that become owned by a member (not owned by anyone before). */
  claims: { emailKey: string; memberId: string }[];
  /** What each input did to its member, in input order (rejected inputs left out). */
  outcomes: { id: string; status: "created" | "merged" | "unchanged" }[];
  /** The inputs left out, with why (only with `rejectBadInputs`). */
  rejected: { index: number; message: string }[];
}

export interface PlanOptions {
  /**
   * Leave out an input that matches two different members, or would give its member more data
   * than a member may hold, and report it in `rejected`, instead of refusing the whole batch: an
   * import's bad row must not stop the rest of its file.
   */
  rejectBadInputs?: boolean;
}

export const MAX_FIELDS = 50;
export const MAX_ALTERNATIVE_EMAILS = 100;

/**
 * Resolves each input to a member and merges its data, in order, as if the inputs were applied
 * one after another: an input is matched by id, else by any of its e-mails (primary or
 * alternative, against every address of every member); no match creates a member. An input whose
 * id and e-mails point at different members, or whose e-mails point at two members, is a
 * member_identity_conflict and nothing of the batch is applied (unless `rejectBadInputs`).
 */
export function planMemberUpserts(
  inputs: MemberInput[],
  stored: ReadonlyMap<string, MemberData>,
  emailOwners: ReadonlyMap<string, string>,
  newMemberId: () => string,
  options: PlanOptions = {},
): UpsertPlan {
  const current = new Map<string, MemberData>(stored);
  const owners = new Map(emailOwners);
  // The addresses the matched members already own are theirs: merging must not claim them again.
  for (const [id, data] of stored) for (const key of emailKeysOf(data)) owners.set(key, id);
  const created = new Set<string>();
  const memberIds = new Set<string>();
  const claims = new Map<string, string>();
  const outcomes: UpsertPlan["outcomes"] = [];
  const rejected: UpsertPlan["rejected"] = [];
  // Nothing of an input is recorded before it passes both checks, so leaving it out is exact.
  const reject = (index: number, error: AppError, message: string) => {
    if (!options.rejectBadInputs) throw error;
    rejected.push({ index, message });
  };

  for (const [index, input] of inputs.entries()) {
    const keyOwners = new Set<string>();
    // Stryker disable next-line ArrayDeclaration: equivalent, an address nobody owns is looked up for nothing
    for (const key of emailKeysOf({ email: input.email ?? null, alternativeEmails: input.alternativeEmails ?? [] })) {
      const owner = owners.get(key);
      if (owner !== undefined) keyOwners.add(owner);
    }
    const target = input.id ?? [...keyOwners][0] ?? newMemberId();
    const other = [...keyOwners].find((owner) => owner !== target);
    if (other !== undefined) {
      const byId = input.id !== undefined;
      reject(
        index,
        identityConflict(index, target, other, byId),
        byId
          ? `its id names member ${target}, but its e-mails belong to member ${other}`
          : `its e-mails belong to two different members: ${target} and ${other}`,
      );
      continue;
    }

    const before = current.get(target);
    const after = mergeMemberData(before ?? emptyMemberData(), input);
    const tooMuch = limitError(after, index);
    if (tooMuch) {
      // Stryker disable next-line OptionalChaining: equivalent, limitError always gives one field error
      reject(index, tooMuch, `${tooMuch.errors?.[0]?.message} (member ${target})`);
      continue;
    }
    if (before === undefined) created.add(target);
    outcomes.push({ id: target, status: before === undefined ? "created" : after === before ? "unchanged" : "merged" });
    current.set(target, after);
    memberIds.add(target);
    for (const key of emailKeysOf(after)) {
      if (!owners.has(key)) claims.set(key, target);
      owners.set(key, target);
    }
  }

  const create: UpsertPlan["create"] = [];
  const update: UpsertPlan["update"] = [];
  for (const id of memberIds) {
    const data = current.get(id) as MemberData;
    if (created.has(id)) create.push({ id, data });
    else if (data !== stored.get(id)) update.push({ id, data });
  }
  return {
    memberIds: [...memberIds],
    create,
    update,
    claims: [...claims].map(([emailKey, memberId]) => ({ emailKey, memberId })),
    outcomes,
    rejected,
  };
}

function identityConflict(index: number, target: string, other: string, byId: boolean): ConflictError {
  const detail = byId
    ? `members[${index}] names member ${target}, but its e-mails belong to member ${other}.`
    : `members[${index}] has e-mails of two different members: ${target} and ${other}.`;
  return new ConflictError("member_identity_conflict", detail);
}

function limitError(data: MemberData, index: number): BadRequestError | undefined {
  if (Object.keys(data.fields).length > MAX_FIELDS) {
    return new BadRequestError("invalid_request", `A member may have at most ${MAX_FIELDS} fields.`, [
      { pointer: `/body/members/${index}/fields`, message: `would give the member more than ${MAX_FIELDS} fields` },
    ]);
  }
  if (data.alternativeEmails.length > MAX_ALTERNATIVE_EMAILS) {
    return new BadRequestError(
      "invalid_request",
      `A member may have at most ${MAX_ALTERNATIVE_EMAILS} alternative e-mails.`,
      [
        {
          pointer: `/body/members/${index}/alternativeEmails`,
          message: `would give the member more than ${MAX_ALTERNATIVE_EMAILS} alternative e-mails`,
        },
      ],
    );
  }
  return undefined;
}
