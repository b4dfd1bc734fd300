// docs/operations.md's Metrics section names every instrument src/platform/metrics.ts defines.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

describe("docs/operations.md", () => {
  it("names every metric the server serves", () => {
    const defined = [...read("src/platform/metrics.ts").matchAll(/name: "(audience_[a-z_]+)"/g)].map((m) => m[1]);
    expect(defined.length).toBeGreaterThan(5);
    const section = read("docs/operations.md").split("## Metrics")[1]?.split("\n## ")[0] ?? "";
    expect(defined.filter((name) => !section.includes(`\`${name}\``))).toEqual([]);
  });
});
