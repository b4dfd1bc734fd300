import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { MAX_CHAIN, MAX_RULE_REACH } from "../../src/features/membership/rules/audience-graph.ts";
import { MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH } from "../../src/features/membership/rules/filter.ts";
import { WORKSPACE_RULE_BOUNDS } from "../../src/features/membership/rules/rule-bounds.ts";

/** The contract's prose states the limits on rules that the code enforces: the same numbers. */
const text = readFileSync(new URL("../../openapi/openapi.yaml", import.meta.url), "utf8");
const contract = parse(text);
const n = (value: number) => value.toLocaleString("en-US");
const row = (code: string) => text.split("\n").find((line) => line.includes(`| \`${code}\` |`)) ?? "";
const docs = new URL("../../docs/rules.md", import.meta.url);

const WORKSPACE_PHRASES = [
  `${n(WORKSPACE_RULE_BOUNDS.conditions)} conditions`,
  `${n(WORKSPACE_RULE_BOUNDS.bytes)} bytes`,
  `${n(WORKSPACE_RULE_BOUNDS.timeConditions)} relative-time conditions`,
  `${n(WORKSPACE_RULE_BOUNDS.dependants)} audiences naming one audience`,
];

describe("the limits on rules, in the contract and in the code", () => {
  it("states the workspace's bounds where rules are set, merged and listed as errors", () => {
    const prose = [
      row("rule_limit_exceeded"),
      contract.paths["/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter"].put.description,
      contract.paths["/v0/workspaces/{workspaceId}/audiences/merge"].post.description,
      contract.components.schemas.Filter.description,
    ].map((description: string) => description.replace(/\s+/g, " "));
    for (const description of prose) {
      for (const phrase of WORKSPACE_PHRASES) expect(description).toContain(phrase);
    }
  });

  it("states the limits of one rule in the filter's schema, the error table and the merge", () => {
    const filter = contract.components.schemas.Filter.description.replace(/\s+/g, " ");
    expect(filter).toContain(`At most ${MAX_FILTER_DEPTH} levels deep and ${MAX_FILTER_CONDITIONS} conditions in all`);
    expect(filter).toContain(`chain at most ${MAX_CHAIN} audiences and reach at most ${MAX_RULE_REACH} audiences`);
    expect(row("invalid_filter")).toContain(`more than ${MAX_CHAIN} deep`);
    expect(row("invalid_filter")).toContain(`reach more than ${MAX_RULE_REACH} audiences`);
    const merge = contract.paths["/v0/workspaces/{workspaceId}/audiences/merge"].post.description.replace(/\s+/g, " ");
    expect(merge).toContain(
      `at most ${MAX_FILTER_DEPTH} levels deep and ${MAX_FILTER_CONDITIONS} conditions, reaching at most ${MAX_RULE_REACH} audiences`,
    );
  });

  it("states them in docs/rules.md too", () => {
    const rules = readFileSync(docs, "utf8").replace(/\s+/g, " ");
    for (const phrase of [...WORKSPACE_PHRASES, `reach at most ${MAX_RULE_REACH} audiences`]) {
      expect(rules.includes(phrase), phrase).toBe(true);
    }
  });
});
