import {
  activityConditionsOf,
  audiencesOf,
  conditionCount,
  type Filter,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  timeConditionsOf,
} from "./filter.ts";

/**
 * What every member write pays for, whatever it touches: each of the workspace's rules is
 * evaluated for every member created or changed (archived audiences' rules too: they keep
 * following, so that they are current when restored), and every audience naming one whose members
 * changed follows it in the same transaction. These bound it per workspace (docs/rules.md).
 */
export const WORKSPACE_RULE_BOUNDS = {
  /** Conditions over all the workspace's rules. */
  conditions: 1_000,
  /** Bytes of all the workspace's rules as JSON: the values of `in` lists are what conditions do not count. */
  bytes: 262_144,
  /** Relative-time conditions (`withinLast`, `notWithinLast`) and activity conditions over all rules: each is followed by the clock. */
  timeConditions: 100,
  /** The rules that may name one audience: they all follow every change of its members. */
  dependants: 10,
} as const;

/** What one rule adds to the workspace's figures. */
export interface RuleFigures {
  conditions: number;
  bytes: number;
  timeConditions: number;
}

export function figuresOf(filter: Filter | null): RuleFigures {
  if (filter === null) return { conditions: 0, bytes: 0, timeConditions: 0 };
  return {
    conditions: conditionCount(filter),
    bytes: Buffer.byteLength(JSON.stringify(filter)),
    // Activity conditions follow the clock too (their windows and the retention slide).
    timeConditions: timeConditionsOf(filter).length + activityConditionsOf(filter).length,
  };
}

const plus = (a: RuleFigures, b: RuleFigures): RuleFigures => ({
  conditions: a.conditions + b.conditions,
  bytes: a.bytes + b.bytes,
  timeConditions: a.timeConditions + b.timeConditions,
});

const LABELS: Record<keyof RuleFigures, string> = {
  conditions: "conditions",
  bytes: "bytes of rules (as JSON)",
  timeConditions: "relative-time and activity conditions (withinLast, notWithinLast, activity)",
};

const n = (value: number) => value.toLocaleString("en-US");

/**
 * Why giving audience `audienceId` (new or not) the rule `filter` would take the workspace past
 * one of WORKSPACE_RULE_BOUNDS, naming the bound and the current figure; undefined when it stays
 * within them. `rules`: every rule of the workspace, archived audiences' included. A change that
 * does not make a figure grow is allowed even past its bound (a workspace filled before the bounds
 * can still shrink its rules).
 */
export function workspaceBoundProblem(
  rules: readonly { id: string; filter: Filter | null }[],
  audienceId: string,
  filter: Filter | null,
): string | undefined {
  const others = rules.filter((rule) => rule.id !== audienceId);
  const old = rules.find((rule) => rule.id === audienceId)?.filter ?? null;
  // The other rules' figures once (each rule's JSON is measured), then with the old rule and the new.
  const rest = others.map((rule) => figuresOf(rule.filter)).reduce(plus, figuresOf(null));
  const before = plus(rest, figuresOf(old));
  const after = plus(rest, figuresOf(filter));
  for (const key of ["conditions", "bytes", "timeConditions"] as const) {
    const bound = WORKSPACE_RULE_BOUNDS[key];
    if (after[key] > bound && after[key] > before[key]) {
      return (
        `The workspace's rules would hold ${n(after[key])} ${LABELS[key]}; a workspace's rules hold at most ${n(bound)} ` +
        `(the other rules hold ${n(rest[key])}).`
      );
    }
  }
  const oldNamed = new Set(audiencesOf(old));
  for (const named of audiencesOf(filter)) {
    if (oldNamed.has(named)) continue;
    const naming = others.filter((rule) => audiencesOf(rule.filter).includes(named)).length;
    if (naming + 1 > WORKSPACE_RULE_BOUNDS.dependants) {
      return (
        `The rules of ${n(naming)} audiences already name audience ${named}; ` +
        `the rules of at most ${n(WORKSPACE_RULE_BOUNDS.dependants)} audiences may name one audience.`
      );
    }
  }
  return undefined;
}

/**
 * Why a rule made by the service rather than sent (a merge's `any` of two rules) breaks the
 * limits of a filter a client sends (filter.ts parseFilter); undefined when it keeps them. Every
 * item of an `all` or `any` holds a condition, so within the conditions' limit a list is too.
 */
export function filterLimitProblem(filter: Filter | null): string | undefined {
  if (filter === null) return undefined;
  const depthOf = (node: Filter): number => {
    if ("all" in node) return 1 + Math.max(...node.all.map(depthOf));
    if ("any" in node) return 1 + Math.max(...node.any.map(depthOf));
    if ("not" in node) return 1 + depthOf(node.not);
    return 1;
  };
  const depth = depthOf(filter);
  if (depth > MAX_FILTER_DEPTH) return `would nest ${n(depth)} levels deep; a rule nests at most ${MAX_FILTER_DEPTH}`;
  const conditions = conditionCount(filter);
  if (conditions > MAX_FILTER_CONDITIONS) {
    return `would hold ${n(conditions)} conditions; a rule holds at most ${MAX_FILTER_CONDITIONS}`;
  }
  return undefined;
}
