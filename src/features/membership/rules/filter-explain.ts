import type { components } from "../../../../generated/api.d.ts";
import { type MemberData, NAMED_FIELDS } from "../../../domain/member-merge.ts";
import { type Filter, foldMember, isActivity } from "./filter.ts";
import { type MatchContext, matches, tallyOf } from "./filter-match.ts";

/** What one node of a rule says about a member: whether it matches, and what it read. */
export interface NodeExplanation {
  /** The node, from the filter ("" is the whole filter; "/all/1/not" as invalid_filter names nodes). */
  pointer: string;
  matches: boolean;
  /** The member's value a condition read (a list for anyEmail, whether the member is in the
   * audience for an audience condition, the count and latest instant for an activity condition);
   * null for a combinator or a value the member lacks. */
  value: string | string[] | boolean | { count: number; lastAt: string | null } | null;
}

/** Every node of a filter with its pointer, in document order (a node before its children). */
export function filterNodes(filter: Filter, pointer = ""): { pointer: string; node: Filter }[] {
  const here = { pointer, node: filter };
  if ("all" in filter) return [here, ...filter.all.flatMap((f, i) => filterNodes(f, `${pointer}/all/${i}`))];
  if ("any" in filter) return [here, ...filter.any.flatMap((f, i) => filterNodes(f, `${pointer}/any/${i}`))];
  if ("not" in filter) return [here, ...filterNodes(filter.not, `${pointer}/not`)];
  return [here];
}

export type FilterWarning = components["schemas"]["FilterWarning"];

/**
 * The warnings of a valid filter (the contract's FilterWarning): each condition on a custom field
 * that `unheld` says no member holds and no declaration types, pointed at as node counts point.
 * The named fields are on every member, so they are never unknown.
 */
export async function filterWarnings(
  filter: Filter | null,
  unheld: (keys: string[]) => Promise<string[]>,
): Promise<FilterWarning[]> {
  if (filter === null) return [];
  const conditions = filterNodes(filter).flatMap(({ pointer, node }) =>
    "field" in node && node.field.startsWith("fields.") ? [{ pointer, key: node.field.slice("fields.".length) }] : [],
  );
  const custom = conditions.filter(({ key }) => !(NAMED_FIELDS as readonly string[]).includes(key));
  if (custom.length === 0) return [];
  const unknown = new Set(await unheld([...new Set(custom.map(({ key }) => key))]));
  return custom
    .filter(({ key }) => unknown.has(key))
    .map(({ pointer, key }) => ({ pointer, code: "unknown_field", detail: `No member has a field named ${key}.` }));
}

/**
 * Evaluates a rule for one member node by node. Each condition is decided by filter-match's
 * `matches` and each combinator from its children exactly as `matches` combines them, so the
 * root's answer is always `matches`' answer. Values are shown as the member has them, not folded.
 */
export function explainFilter(
  filter: Filter,
  member: MemberData & { id: string },
  createdAt: Date,
  context: MatchContext,
): { matches: boolean; nodes: NodeExplanation[] } {
  const folded = foldMember(member);
  const nodes: NodeExplanation[] = [];
  const visit = (node: Filter, pointer: string): boolean => {
    const slot: NodeExplanation = { pointer, matches: false, value: null };
    nodes.push(slot);
    if ("all" in node) {
      // Every child is visited (no short cut), so that each node has its answer.
      slot.matches = node.all.map((f, i) => visit(f, `${pointer}/all/${i}`)).every(Boolean);
    } else if ("any" in node) {
      slot.matches = node.any.map((f, i) => visit(f, `${pointer}/any/${i}`)).some(Boolean);
    } else if ("not" in node) {
      slot.matches = !visit(node.not, `${pointer}/not`);
    } else {
      slot.matches = matches(node, folded, createdAt, context);
      if (isActivity(node)) {
        const { count, lastAt } = tallyOf(node, context);
        slot.value = { count, lastAt: lastAt === null ? null : new Date(lastAt).toISOString() };
      } else {
        slot.value = valueRead(node.field, node.value, member, createdAt, context);
      }
    }
    return slot.matches;
  };
  return { matches: visit(filter, ""), nodes };
}

function valueRead(
  field: string,
  value: unknown,
  member: MemberData & { id: string },
  createdAt: Date,
  context: MatchContext,
): NodeExplanation["value"] {
  if (field === "audience") return context.inAudience(value as string);
  if (field === "createdAt") return createdAt.toISOString();
  if (field === "id") return member.id;
  if (field === "email") return member.email;
  if (field === "anyEmail") {
    const emails = [member.email, ...member.alternativeEmails].filter((e): e is string => e !== null);
    return emails.length === 0 ? null : emails;
  }
  // An empty value is no value (foldMember drops it too); own keys only, as filter-match reads.
  const key = field.slice("fields.".length);
  const text = Object.hasOwn(member.fields, key) ? member.fields[key] : undefined;
  return text === undefined || text === "" ? null : text;
}
