import { type Filter, kindOf, OP_LABELS, valueShape } from "./rule-state.ts";

/** The node a pointer names in a filter ("" the whole filter, "/all/1/not" …), if it has one. */
export function nodeAt(filter: Filter, pointer: string): Filter | undefined {
  let node: unknown = filter;
  for (const step of pointer.split("/").slice(1)) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[step];
  }
  return typeof node === "object" && node !== null ? (node as Filter) : undefined;
}

/** A node in words: "fields.score is over 50", "in audience Customers", "all of 3 conditions". */
export function describeNode(node: Filter, audienceNames: ReadonlyMap<string, string> = new Map()): string {
  if ("all" in node) return `all of ${node.all.length}`;
  if ("any" in node) return `any of ${node.any.length}`;
  if ("not" in node) return "not";
  const op = OP_LABELS[node.op];
  if (node.field === "audience") {
    const name = typeof node.value === "string" ? (audienceNames.get(node.value) ?? node.value) : "";
    return `${node.op === "in" ? "in" : "not in"} audience ${name}`;
  }
  const shape = valueShape(node.op, kindOf(node.field, {}));
  if (shape === "none") return `${node.field} ${op}`;
  const value = Array.isArray(node.value) ? node.value.join(shape === "pair" ? " and " : ", ") : (node.value ?? "");
  return `${node.field} ${op} ${value}`;
}
