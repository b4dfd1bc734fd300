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
 * How many audiences one rule may reach through audience conditions, directly or through the
 * rules of the audiences it names: what one member change may make follow, and what a check of a
 * rule reads.
 */
export const MAX_RULE_REACH = 100;

export type RuleProblem = "cycle" | "too deep" | "too wide";

/**
 * Whether giving `audienceId` a rule that names `named` keeps the graph free of cycles, its
 * chains at most MAX_CHAIN audiences long and what every rule reaches at most MAX_RULE_REACH
 * audiences: "cycle" when one of them leads back to it, "too deep" when the longest chain through
 * it would grow past the limit, "too wide" when it, or a rule that names it (directly or not),
 * would reach more audiences than allowed (and more than it reached before: a graph made before
 * the bound is not refused a change that keeps it as it was).
 *
 * Each audience is visited a bounded number of times (the chains are memoized, the reach of each
 * audience above stops at the bound): the graph's paths can be exponentially many.
 */
export function checkNewRule(graph: AudienceGraph, audienceId: string, named: string[]): RuleProblem | null {
  const below = new Map<string, number>();
  const chainBelow = (id: string): number => {
    if (id === audienceId) return Number.POSITIVE_INFINITY;
    const known = below.get(id);
    if (known !== undefined) return known;
    // Zero while in progress: a cycle the graph already holds (it should hold none) ends here.
    below.set(id, 0);
    let longest = 0;
    for (const other of graph.uses.get(id) ?? []) longest = Math.max(longest, chainBelow(other));
    below.set(id, 1 + longest);
    return 1 + longest;
  };
  const depth = Math.max(0, ...named.map(chainBelow));
  if (depth === Number.POSITIVE_INFINITY) return "cycle";
  const above = ancestorsOf(graph, audienceId);
  if (depth + (above.get(audienceId) ?? 1) > MAX_CHAIN) return "too deep";
  const after = (id: string) => (id === audienceId ? named : (graph.uses.get(id) ?? []));
  const before = (id: string) => graph.uses.get(id) ?? [];
  for (const id of above.keys()) {
    if (reach(after, id, MAX_RULE_REACH) > MAX_RULE_REACH && reach(after, id) > reach(before, id)) {
      return "too wide";
    }
  }
  return null;
}

/** Whether audience `from`'s rule reaches audience `to`, directly or through the rules it names. */
export function leadsTo(graph: AudienceGraph, from: string, to: string): boolean {
  const seen = new Set<string>();
  const visit = (id: string): boolean => {
    if (id === to) return true;
    if (seen.has(id)) return false;
    seen.add(id);
    return (graph.uses.get(id) ?? []).some(visit);
  };
  return visit(from);
}

/** `audienceId` and every audience whose rule names it, directly or not, with the longest chain above each (itself included). */
function ancestorsOf(graph: AudienceGraph, audienceId: string): Map<string, number> {
  const chain = new Map<string, number>();
  const chainAbove = (id: string): number => {
    const known = chain.get(id);
    if (known !== undefined) return known;
    chain.set(id, 0);
    let longest = 0;
    for (const other of graph.usedBy.get(id) ?? []) longest = Math.max(longest, chainAbove(other));
    chain.set(id, 1 + longest);
    return 1 + longest;
  };
  chainAbove(audienceId);
  return chain;
}

/** How many audiences the rule of `id` reaches through `uses`, counting no further than past `limit`. */
function reach(uses: (id: string) => readonly string[], id: string, limit = Number.POSITIVE_INFINITY): number {
  const reached = new Set<string>();
  const queue = [...uses(id)];
  while (queue.length > 0 && reached.size <= limit) {
    const next = queue.pop() as string;
    if (next === id || reached.has(next)) continue;
    reached.add(next);
    queue.push(...uses(next));
  }
  return reached.size;
}
