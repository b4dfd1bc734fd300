// The filter language evaluated the naive way, written from the contract and DESIGN.md and
// sharing no code with src/features/membership/filter.ts: the oracle that the in-memory fakes, the property
// test and the filter's unit tests compare the service against. It favours being obviously right
// over being fast: every case spelled out, no folding done ahead, nothing cached.
//
//   - a condition on a field looks at the member's values of that field: `id` (one), `email` (the
//     primary address, or none), `anyEmail` (the primary and every alternative), `fields.<key>`
//     (the value, or none when the member has no such field or it is empty);
//   - strings compare case-insensitively (lower case on both sides);
//   - eq / contains / startsWith / endsWith / in: some value qualifies; ne / notIn: none does
//     (so a member without the field matches ne and notIn); exists / notExists: has any value;
//   - createdAt before / after: strictly earlier / strictly later than the timestamp;
//   - all: every part matches; any: at least one; not: the part does not; no filter: nobody.

type Condition = { field: string; op: string; value?: string | string[] };
/** The shape of src/features/membership/filter.ts's Filter, restated so nothing is imported from it. */
export type ReferenceFilter =
  | { all: ReferenceFilter[] }
  | { any: ReferenceFilter[] }
  | { not: ReferenceFilter }
  | Condition;

/** A member as the API shows it (createdAt as a Date or as its ISO string). */
export interface PlainMember {
  id: string;
  email: string | null;
  alternativeEmails: string[];
  fields: Record<string, string>;
  createdAt: Date | string;
}

export function referenceMatches(filter: ReferenceFilter | null, member: PlainMember): boolean {
  if (filter === null) return false;
  if ("all" in filter) {
    for (const part of filter.all) if (!referenceMatches(part, member)) return false;
    return true;
  }
  if ("any" in filter) {
    for (const part of filter.any) if (referenceMatches(part, member)) return true;
    return false;
  }
  if ("not" in filter) return !referenceMatches(filter.not, member);
  return conditionHolds(filter, member);
}

function conditionHolds({ field, op, value }: Condition, member: PlainMember): boolean {
  if (field === "createdAt") {
    const created = new Date(member.createdAt).getTime();
    const at = new Date(value as string).getTime();
    if (op === "before") return created < at;
    if (op === "after") return created > at;
    throw new Error(`reference filter: ${op} is not an operator of createdAt`);
  }
  const values = valuesOf(member, field).map(lower);
  const wanted = typeof value === "string" ? lower(value) : "";
  const list = Array.isArray(value) ? value.map(lower) : [];
  const some = (test: (v: string) => boolean) => {
    for (const v of values) if (test(v)) return true;
    return false;
  };
  switch (op) {
    case "eq":
      return some((v) => v === wanted);
    case "ne":
      return !some((v) => v === wanted);
    case "contains":
      return some((v) => v.indexOf(wanted) !== -1);
    case "startsWith":
      return some((v) => v.substring(0, wanted.length) === wanted);
    case "endsWith":
      return some((v) => v.length >= wanted.length && v.substring(v.length - wanted.length) === wanted);
    case "in":
      return some((v) => list.indexOf(v) !== -1);
    case "notIn":
      return !some((v) => list.indexOf(v) !== -1);
    case "exists":
      return values.length > 0;
    case "notExists":
      return values.length === 0;
  }
  throw new Error(`reference filter: unknown operator ${op}`);
}

function valuesOf(member: PlainMember, field: string): string[] {
  if (field === "id") return [member.id];
  if (field === "email") return member.email === null ? [] : [member.email];
  if (field === "anyEmail")
    return member.email === null ? member.alternativeEmails : [member.email, ...member.alternativeEmails];
  if (field.startsWith("fields.")) {
    const key = field.substring("fields.".length);
    const found = Object.hasOwn(member.fields, key) ? member.fields[key] : undefined;
    return found === undefined || found === "" ? [] : [found];
  }
  throw new Error(`reference filter: unknown field ${field}`);
}

const lower = (text: string) => text.toLowerCase();
