import { audiencesOf, type Filter } from "./filter.ts";

/** The longest chain of audience conditions: an audience, one it names, one that names… */
export const MAX_CHAIN = 10;

/** The audiences whose rules name other audiences, and which. */
export interface AudienceGraph {
  /** audience → the audiences its rule names. */
  readonly uses: ReadonlyMap<string, readonly string[]>;
  /** audience → the audiences whose rules name it. */
  readonly usedBy: ReadonlyMap<string, readonly string[]>;
}

export function audienceGraph(rules: { id: string; filter: Filter | null }[]): AudienceGraph {
  const uses = new Map<string, string[]>();
  const usedBy = new Map<string, string[]>();
  for (const { id, filter } of rules) {
    const named = audiencesOf(filter);
    if (named.length === 0) continue;
    uses.set(id, named);
    for (const other of named) usedBy.set(other, [...(usedBy.get(other) ?? []), id]);
  }
  return { uses, usedBy };
}

/**
 * Every audience that follows one of `changed` (whose rule names it, or names one that does…),
 * each after all the audiences it names among them: the order in which they are brought up to
 * date. Ties in id order, so that a write's events come in a stable order.
 */
export function followersInOrder(graph: AudienceGraph, changed: Iterable<string>): string[] {
  const reached = new Set<string>();
  const visit = (id: string) => {
    for (const follower of graph.usedBy.get(id) ?? []) {
      if (reached.has(follower)) continue;
      reached.add(follower);
      visit(follower);
    }
  };
  for (const id of changed) visit(id);
  return inDependencyOrder(graph, reached);
}

/** These audiences ordered so that each comes after every one of them that its rule names. */
export function inDependencyOrder(graph: AudienceGraph, ids: Set<string>): string[] {
  const order: string[] = [];
  const placed = new Set<string>();
  const place = (id: string) => {
    if (placed.has(id)) return;
    placed.add(id);
    for (const named of [...(graph.uses.get(id) ?? [])].sort()) if (ids.has(named)) place(named);
    order.push(id);
  };
  for (const id of [...ids].sort()) place(id);
  return order;
}

/**
 * Whether giving `audienceId` a rule that names `named` keeps the graph free of cycles and its
 * chains at most MAX_CHAIN audiences long: "cycle" when one of them leads back to it, "too deep"
 * when the longest chain through it would grow past the limit.
 */
export function checkNewRule(graph: AudienceGraph, audienceId: string, named: string[]): "cycle" | "too deep" | null {
  const below = (id: string, seen: Set<string>): number => {
    if (id === audienceId) return Number.POSITIVE_INFINITY;
    if (seen.has(id)) return 0;
    const next = new Set(seen).add(id);
    return 1 + Math.max(0, ...(graph.uses.get(id) ?? []).map((other) => below(other, next)));
  };
  const above = (id: string): number => 1 + Math.max(0, ...(graph.usedBy.get(id) ?? []).map(above));
  const depth = Math.max(0, ...named.map((id) => below(id, new Set())));
  if (depth === Number.POSITIVE_INFINITY) return "cycle";
  return depth + above(audienceId) > MAX_CHAIN ? "too deep" : null;
}
