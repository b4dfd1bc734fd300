// docs/configuration.md and .env.example say what the server reads: every variable of
// src/config/config.ts, with the default it really has, and nothing it does not read.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadConfig, VARIABLES } from "../../src/config/config.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** The rows of the table: variable → its Default cell, without the backticks. */
function documented(): Map<string, string> {
  const rows = read("docs/configuration.md").matchAll(/^\| `([A-Z_]+)` +\| ([^|]+?) +\|/gm);
  return new Map([...rows].map(([, name, fallback]) => [name as string, (fallback as string).replaceAll("`", "")]));
}

describe("docs/configuration.md", () => {
  it("lists every variable the server reads, and no other", () => {
    expect([...documented().keys()].sort()).toEqual(Object.keys(VARIABLES).sort());
  });

  it("gives each variable's default as the schema has it", () => {
    for (const [name, check] of Object.entries(VARIABLES)) {
      const fallback = "default" in check ? String(check.default) : undefined;
      const cell = documented().get(name);
      if (fallback === undefined) expect(cell, name).not.toMatch(/^[0-9]|^(true|false)$/);
      else expect(cell, name).toBe(fallback);
    }
  });
});

describe(".env.example", () => {
  const lines = read(".env.example").split("\n");
  const assigned = new Map(
    lines.filter((line) => /^[A-Z_]+=/.test(line)).map((line) => line.split("=", 2) as [string, string]),
  );

  it("names every variable", () => {
    expect([...assigned.keys()].sort()).toEqual(Object.keys(VARIABLES).sort());
  });

  it("loaded as it is, gives the default configuration", () => {
    expect(loadConfig(Object.fromEntries(assigned))).toEqual(loadConfig({}));
  });
});
