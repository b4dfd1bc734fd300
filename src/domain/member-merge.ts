/** The data of a member that "merging differing information" is about. */
export interface MemberData {
  email: string | null;
  fields: Record<string, string>;
  alternativeEmails: string[];
}

/** A member's data as a client sends it: every part optional. */
export interface MemberDataInput {
  email?: string;
  fields?: Record<string, string>;
  alternativeEmails?: string[];
  /**
   * Make `email` the primary address even when the member already has it as an alternative (an
   * explicit edit of one member, PATCH). Without it, an address the member already has keeps its
   * place: an import that knows only someone's other address must not change where their mail goes.
   */
  setPrimary?: boolean;
}

export const NAMED_FIELDS = ["firstName", "lastName", "role", "company"] as const;

export const emptyMemberData = (): MemberData => ({ email: null, fields: {}, alternativeEmails: [] });

/** The key e-mail addresses are matched and made unique by. */
export const emailKey = (email: string): string => email.trim().toLowerCase();

/**
 * Merges incoming data into stored data so that nothing a client sent before is lost:
 * non-empty incoming field values win and absent or empty ones keep the stored value;
 * alternative e-mails are unioned; an address new to the member, sent as `email`, becomes the
 * primary and moves the previous one into alternativeEmails (one it already has stays where it
 * is, unless `setPrimary`). Returns the stored object itself when nothing changes.
 */
export function mergeMemberData(stored: MemberData, input: MemberDataInput): MemberData {
  const fields = { ...stored.fields };
  for (const [key, value] of Object.entries(input.fields ?? {})) {
    if (value !== "") fields[key] = value;
  }

  let email = stored.email;
  const alternatives = [...stored.alternativeEmails];
  const incoming = input.email?.trim();
  const isPrimary = incoming !== undefined && email !== null && emailKey(email) === emailKey(incoming);
  const isAlternative =
    incoming !== undefined && stored.alternativeEmails.some((known) => emailKey(known) === emailKey(incoming));
  if (incoming && !isPrimary && (!isAlternative || input.setPrimary)) {
    if (email !== null) alternatives.push(email);
    email = incoming;
  }
  for (const alternative of input.alternativeEmails ?? []) alternatives.push(alternative.trim());

  const merged: MemberData = { email, fields, alternativeEmails: uniqueEmails(alternatives, email) };
  return sameMemberData(stored, merged) ? stored : merged;
}

/** Every address of a member, case-folded: the keys it owns in the workspace. */
export function emailKeysOf(data: Pick<MemberData, "email" | "alternativeEmails">): string[] {
  const keys = data.alternativeEmails.map(emailKey);
  if (data.email !== null) keys.unshift(emailKey(data.email));
  return [...new Set(keys)];
}

/** The response form of member fields: the four named fields always present. */
export function withNamedFields(fields: Record<string, string>): Record<string, string> {
  return { firstName: "", lastName: "", role: "", company: "", ...fields };
}

function uniqueEmails(emails: string[], primary: string | null): string[] {
  // Stryker disable next-line ArrayDeclaration: equivalent, a made-up key no address has
  const seen = new Set(primary === null ? [] : [emailKey(primary)]);
  const out: string[] = [];
  for (const email of emails) {
    const key = emailKey(email);
    if (key === "" || seen.has(key)) continue;
    seen.add(key);
    out.push(email);
  }
  return out;
}

function sameMemberData(a: MemberData, b: MemberData): boolean {
  if (a.email !== b.email) return false;
  if (a.alternativeEmails.length !== b.alternativeEmails.length) return false;
  // Stryker disable next-line all: equivalent, merging only appends to the stored list, so equal lengths mean equal lists
  if (a.alternativeEmails.some((email, i) => email !== b.alternativeEmails[i])) return false;
  const aKeys = Object.keys(a.fields);
  if (aKeys.length !== Object.keys(b.fields).length) return false;
  return aKeys.every((key) => a.fields[key] === b.fields[key]);
}
