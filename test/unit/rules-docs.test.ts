import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FILTER_OPERATORS, type FilterFieldKind } from "../../generated/filter-operators.ts";

// docs/rules.md's table of operators says, for each kind of field, what the contract declares
// (x-operators-by-kind): a new operator is documented, or this fails.

/** The kinds each row of the table is about, from its first cell ("same": the row above's). */
function kindsOfRow(cell: string, previous: FilterFieldKind[]): FilterFieldKind[] {
  if (cell === "same") return previous;
  const kinds: FilterFieldKind[] = [];
  if (cell.includes("`id`") || cell.startsWith("string") || cell.includes(", string")) kinds.push("string");
  if (cell.startsWith("number")) kinds.push("number");
  if (cell.startsWith("date")) kinds.push("date");
  if (cell.includes("`createdAt`")) kinds.push("createdAt");
  if (cell.startsWith("boolean")) kinds.push("boolean");
  if (cell === "`audience`") kinds.push("audience");
  return kinds;
}

describe("docs/rules.md's operators", () => {
  it("are, kind by kind, the contract's", () => {
    const text = readFileSync("docs/rules.md", "utf8");
    const table = text.slice(text.indexOf("| field | ops | value |"));
    const rows = table.split("\n").slice(2);
    const documented = new Map<FilterFieldKind, Set<string>>();
    let kinds: FilterFieldKind[] = [];
    for (const row of rows) {
      if (!row.startsWith("|")) break;
      const [field = "", ops = ""] = row
        .split("|")
        .slice(1)
        .map((cell) => cell.trim());
      kinds = kindsOfRow(field, kinds);
      expect(kinds.length, `a kind of field in "${field}"`).toBeGreaterThan(0);
      // Only the operators themselves: "(the same as `lt`, `gt`)" names no new one.
      const named = [...ops.replace(/\(.*?\)/g, "").matchAll(/`(\w+)`/g)].map((m) => m[1] as string);
      for (const kind of kinds) {
        const set = documented.get(kind) ?? new Set();
        for (const op of named) set.add(op);
        documented.set(kind, set);
      }
    }
    for (const [kind, ops] of Object.entries(FILTER_OPERATORS)) {
      expect([...(documented.get(kind as FilterFieldKind) ?? [])].sort(), `the ${kind} operators`).toEqual(
        [...ops].sort(),
      );
    }
  });
});
