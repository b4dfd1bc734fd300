// docs/api.md lists every operation of the contract, by its operationId, and no operation the
// contract does not have.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readContract } from "../../src/contract/contract.ts";

const DOC = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
const OPERATION_IDS = Object.values(readContract().paths)
  .flatMap((item) => Object.values(item).map((operation) => operation.operationId))
  .filter((id) => id !== undefined);

describe("docs/api.md", () => {
  it("names every operation of the contract", () => {
    expect(OPERATION_IDS.length).toBeGreaterThan(40);
    expect(OPERATION_IDS.filter((id) => !new RegExp(`\\b${id}\\b`).test(DOC))).toEqual([]);
  });

  it("lists in its operations table only operations the contract has", () => {
    const section = DOC.split("## Operations")[1]?.split("\n## ")[0] ?? "";
    const listed = [...section.matchAll(/^\| ([A-Za-z, ]+?) +\|/gm)].flatMap((m) => (m[1] as string).split(", "));
    expect(listed.length).toBeGreaterThan(30);
    expect(listed.filter((name) => name !== "Operation" && !OPERATION_IDS.includes(name))).toEqual([]);
  });
});
