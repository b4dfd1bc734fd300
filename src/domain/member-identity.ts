import { type AppError, BadRequestError, ConflictError, type FieldError } from "./errors.ts";
import { type FieldTypes, fitsType, TYPE_FORMS, typeOf } from "./field-types.ts";
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
  /**
   * The declared types of the workspace's fields: an input with a value that does not parse as
   * its field's type is refused (400 invalid_field_value), or left out with `rejectBadInputs`.
   */
  types?: FieldTypes;
  /** Where input `index`'s field `key` is in the request, for the errors' pointers. */
  fieldPointer?: (index: number, key: string) => string;
}

/** A problem lists at most this many bad values (a batch of 10,000 could hold half a million). */
const MAX_VALUE_ERRORS = 100;

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

  const misfits = (input: MemberInput) => misfitValues(input, options.types);
  if (!options.rejectBadInputs) {
    // Every bad value of the batch, so a client fixes them at once; nothing is written.
    const errors = inputs.flatMap((input, index) =>
      misfits(input).map(({ key, type }) => ({
        pointer: (options.fieldPointer ?? memberFieldPointer)(index, key),
        message: `is not a ${type}: send ${TYPE_FORMS[type]}`,
      })),
    );
    if (errors.length > 0) throw invalidFieldValues(errors);
  }

  for (const [index, input] of inputs.entries()) {
    const misfit = misfits(input)[0];
    if (misfit !== undefined) {
      const shown = JSON.stringify(misfit.value.slice(0, 80));
      rejected.push({ index, message: `${misfit.key}: not a ${misfit.type} (${shown})` });
      continue;
    }
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

const memberFieldPointer = (index: number, key: string) => `/body/members/${index}/fields/${key}`;

/** The input's non-empty values that do not parse as their field's declared type, in key order. */
function misfitValues(input: MemberInput, types: FieldTypes | undefined) {
  if (types === undefined || types.size === 0) return [];
  return Object.entries(input.fields ?? {}).flatMap(([key, value]) => {
    const type = typeOf(types, key);
    return fitsType(type, value) ? [] : [{ key, value, type }];
  });
}

function invalidFieldValues(errors: FieldError[]): BadRequestError {
  const detail =
    errors.length === 1
      ? "A field value does not parse as its field's declared type."
      : `${errors.length} field values do not parse as their fields' declared types.`;
  return new BadRequestError("invalid_field_value", detail, errors.slice(0, MAX_VALUE_ERRORS));
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
