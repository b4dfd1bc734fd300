import { type Filter, kindOf, OP_LABELS, shownField, valueShape } from "./rule-state.ts";

/** The node a pointer names in a filter ("" the whole filter, "/all/1/not" …), if it has one. */
export function nodeAt(filter: Filter, pointer: string): Filter | undefined {
  let node: unknown = filter;
  for (const step of pointer.split("/").slice(1)) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[step];
  }
  return typeof node === "object" && node !== null ? (node as Filter) : undefined;
}

/** A node in words: "score is over 50", "in audience Customers", "all of 3 conditions". */
export function describeNode(node: Filter, audienceNames: ReadonlyMap<string, string> = new Map()): string {
  if ("all" in node) return `all of ${node.all.length}`;
  if ("any" in node) return `any of ${node.any.length}`;
  if ("not" in node) return "not";
  if ("activity" in node) return describeActivity(node);
  const op = OP_LABELS[node.op];
  if (node.field === "audience") {
    const name = typeof node.value === "string" ? (audienceNames.get(node.value) ?? node.value) : "";
    return `${node.op === "in" ? "in" : "not in"} audience ${name}`;
  }
  const shape = valueShape(node.op, kindOf(node.field, {}));
  const field = shownField(node.field);
  if (shape === "none") return `${field} ${op}`;
  const value = Array.isArray(node.value) ? node.value.join(shape === "pair" ? " and " : ", ") : (node.value ?? "");
  return `${field} ${op} ${value}`;
}

const COUNT_WORDS = {
  eq: "exactly",
  ne: "other than",
  gt: "more than",
  gte: "at least",
  lt: "fewer than",
  lte: "at most",
};

/** An activity condition in words: "order.placed at least 2 times in the last P30D". */
function describeActivity(node: Extract<Filter, { activity: string }>): string {
  const { op, value } = node.count ?? { op: "gte", value: 1 };
  const window =
    node.withinLast !== undefined
      ? ` in the last ${node.withinLast}`
      : node.notWithinLast !== undefined
        ? ` before the last ${node.notWithinLast}`
        : node.between !== undefined
          ? ` between ${node.between.join(" and ")}`
          : "";
  const filtered = node.where === undefined ? "" : " (matching a filter)";
  return `did ${node.activity}${filtered} ${COUNT_WORDS[op]} ${value} time${value === 1 ? "" : "s"}${window}`;
}
