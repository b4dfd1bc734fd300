import { describe, expect, it } from "vitest";
import {
  type AudienceGraph,
  audienceGraph,
  checkNewRule,
  followersInOrder,
  inDependencyOrder,
  leadsTo,
  MAX_RULE_REACH,
} from "../../src/features/membership/rules/audience-graph.ts";
import type { Filter } from "../../src/features/membership/rules/filter.ts";

const inA = (id: string): Filter => ({ field: "audience", op: "in", value: id });
const notIn = (id: string): Filter => ({ field: "audience", op: "notIn", value: id });
const plain: Filter = { field: "email", op: "exists" };

/** b and c name a; d names b and c; e names d; f has a rule naming nobody; g has no rule. */
const graph = audienceGraph([
  { id: "b", filter: inA("a") },
  { id: "c", filter: { all: [notIn("a"), plain] } },
  { id: "d", filter: { any: [inA("c"), { not: inA("b") }, inA("b")] } },
  { id: "e", filter: inA("d") },
  { id: "f", filter: plain },
  { id: "g", filter: null },
]);

describe("leadsTo", () => {
  it("follows rules through the audiences they name, not against them", () => {
    expect(leadsTo(graph, "e", "a")).toBe(true);
    expect(leadsTo(graph, "d", "b")).toBe(true);
    expect(leadsTo(graph, "a", "e")).toBe(false);
    expect(leadsTo(graph, "c", "b")).toBe(false);
    expect(leadsTo(graph, "f", "a")).toBe(false);
    expect(leadsTo(graph, "g", "g")).toBe(true);
  });

  it("ends on a cycle the graph already holds", () => {
    const looped = audienceGraph([
      { id: "x", filter: inA("y") },
      { id: "y", filter: inA("x") },
    ]);
    expect(leadsTo(looped, "x", "z")).toBe(false);
    expect(leadsTo(looped, "x", "y")).toBe(true);
  });
});

describe("the graph of audience conditions", () => {
  it("knows which audiences each rule names, once each, and the reverse", () => {
    expect(Object.fromEntries(graph.uses)).toEqual({ b: ["a"], c: ["a"], d: ["c", "b"], e: ["d"] });
    expect(Object.fromEntries(graph.usedBy)).toEqual({ a: ["b", "c"], b: ["d"], c: ["d"], d: ["e"] });
  });

  it("orders the followers of a change after everything they name, ties by id", () => {
    expect(followersInOrder(graph, ["a"])).toEqual(["b", "c", "d", "e"]);
    expect(followersInOrder(graph, ["c"])).toEqual(["d", "e"]);
    expect(followersInOrder(graph, ["b", "c"])).toEqual(["d", "e"]);
    expect(followersInOrder(graph, ["e"])).toEqual([]);
    expect(followersInOrder(graph, ["f", "g", "nobody"])).toEqual([]);
  });

  it("orders any set of audiences so that each comes after those of them it names", () => {
    expect(inDependencyOrder(graph, new Set(["e", "d", "c", "b", "f"]))).toEqual(["b", "c", "d", "e", "f"]);
    expect(inDependencyOrder(graph, new Set(["e", "b"]))).toEqual(["b", "e"]);
    const chain = audienceGraph([
      { id: "x1", filter: inA("x3") },
      { id: "x3", filter: inA("x2") },
    ]);
    expect(inDependencyOrder(chain, new Set(["x1", "x2", "x3"]))).toEqual(["x2", "x3", "x1"]);
  });

  it("finds a rule that would lead back to its own audience, directly or through others", () => {
    expect(checkNewRule(graph, "a", ["a"])).toBe("cycle");
    expect(checkNewRule(graph, "a", ["e"])).toBe("cycle");
    expect(checkNewRule(graph, "b", ["d"])).toBe("cycle");
    expect(checkNewRule(graph, "a", ["f", "g"])).toBeNull();
    expect(checkNewRule(graph, "e", ["d", "c"])).toBeNull();
    expect(checkNewRule(graph, "new", ["e", "unknown"])).toBeNull();
  });

  it("counts a chain through the new rule from the audiences above it to the deepest below", () => {
    // x0 ← x1 ← … ← x8: a chain of 9 audiences; x9 naming x8 makes 10, still allowed.
    const rules = Array.from({ length: 8 }, (_, i) => ({ id: `x${i + 1}`, filter: inA(`x${i}`) }));
    const chain = audienceGraph(rules);
    expect(checkNewRule(chain, "x9", ["x8"])).toBeNull();
    expect(checkNewRule(audienceGraph([...rules, { id: "x9", filter: inA("x8") }]), "x10", ["x9"])).toBe("too deep");
    // Lengthening it from below: x0 naming y makes 10 with y; naming z that names y makes 11.
    expect(checkNewRule(chain, "x0", ["y"])).toBeNull();
    expect(checkNewRule(audienceGraph([...rules, { id: "z", filter: inA("y") }]), "x0", ["z"])).toBe("too deep");
    // In the middle: what is above x4 (x5…x8) plus what is below its new rule.
    expect(checkNewRule(chain, "x4", ["x3"])).toBeNull();
  });

  it("checks a rule over a wide layered graph visiting each audience a bounded number of times", () => {
    // Ten layers of six audiences, each naming the six of the layer below: 6^10 paths from the top.
    const id = (layer: number, i: number) => `l${layer}_${i}`;
    const rules = [];
    for (let layer = 1; layer < 10; layer++) {
      for (let i = 0; i < 6; i++) {
        const below = Array.from({ length: 6 }, (_, j) => inA(id(layer - 1, j)));
        rules.push({ id: id(layer, i), filter: { any: below } });
      }
    }
    const { graph: counted, visits } = countingGraph(audienceGraph(rules));
    const top = Array.from({ length: 6 }, (_, i) => id(9, i));
    expect(checkNewRule(counted, "new", top)).toBe("too deep");
    // Below the top layer: a chain of 10 with the new audience, allowed, and every audience read.
    expect(checkNewRule(counted, "new", [id(8, 0)])).toBeNull();
    // A new rule low in the graph, under 48 audiences whose reach it changes.
    expect(checkNewRule(counted, id(1, 0), [id(0, 0)])).toBeNull();
    // 60 audiences and 324 edges: the reach of each audience above read once, not one read per path.
    expect(visits()).toBeLessThan(5_000);
  });

  it("refuses a rule that would reach more audiences than the bound, or make one above it do so", () => {
    // hub names MAX_RULE_REACH audiences: the most a rule may reach.
    const leaves = Array.from({ length: MAX_RULE_REACH }, (_, i) => `leaf${i}`);
    const hub = { id: "hub", filter: { any: leaves.slice(0, 100).map(inA) } };
    const wide = audienceGraph([hub, { id: "top", filter: inA("mid") }]);
    expect(checkNewRule(wide, "mid", ["leaf0"])).toBeNull();
    // mid naming hub would make top reach hub, its leaves and mid: 102.
    expect(checkNewRule(wide, "mid", ["hub"])).toBe("too wide");
    expect(checkNewRule(wide, "new", ["hub"])).toBe("too wide");
    expect(checkNewRule(wide, "new", ["leaf1", "leaf2"])).toBeNull();
    // A graph already past the bound (made before it) may still change without growing.
    const old = audienceGraph([{ id: "old", filter: { any: [inA("hub"), inA("other")] } }, hub]);
    expect(checkNewRule(old, "old", ["hub"])).toBeNull();
    expect(checkNewRule(old, "old", ["hub", "other", "third"])).toBe("too wide");
  });
});

/** The graph with every read of its edges counted. */
function countingGraph(graph: AudienceGraph): { graph: AudienceGraph; visits: () => number } {
  let visits = 0;
  const counting = (map: ReadonlyMap<string, readonly string[]>): ReadonlyMap<string, readonly string[]> =>
    new Proxy(map, {
      get(target, key) {
        if (key === "get") {
          return (id: string) => {
            visits++;
            return target.get(id);
          };
        }
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return { graph: { uses: counting(graph.uses), usedBy: counting(graph.usedBy) }, visits: () => visits };
}
