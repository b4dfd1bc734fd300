// docs/configuration.md's tables and .env.example are written from src/config/configuration.ts
// by `npm run generate`: they say what the server reads, with the defaults it really has.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configurationTables, envExample } from "../../scripts/configuration-docs.ts";
import { loadConfig, VARIABLES } from "../../src/config/config.ts";
import { CONFIGURATION } from "../../src/config/configuration.ts";
import { variablesOf } from "../../src/config/variable.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const REGENERATE = "run `npm run generate` after changing src/config/configuration.ts";

describe("src/config/configuration.ts", () => {
  it("declares each variable once", () => {
    const names = variablesOf(CONFIGURATION).map((v) => v.name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });
});

describe("docs/configuration.md", () => {
  it("has the tables the declarations give", () => {
    expect(read("docs/configuration.md"), REGENERATE).toContain(configurationTables());
  });

  it("lists every variable the server reads, once", () => {
    const rows = [...read("docs/configuration.md").matchAll(/^\| `([A-Z_]+)` \|/gm)].map(([, name]) => name);
    expect(rows.sort()).toEqual(Object.keys(VARIABLES).sort());
  });
});

describe(".env.example", () => {
  const text = read(".env.example");
  const assigned = new Map(
    text
      .split("\n")
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => line.split("=", 2) as [string, string]),
  );

  it("is what the declarations give", () => {
    expect(text, REGENERATE).toBe(envExample());
  });

  it("names every variable, and loaded as it is, gives the default configuration", () => {
    expect([...assigned.keys()].sort()).toEqual(Object.keys(VARIABLES).sort());
    expect(loadConfig(Object.fromEntries(assigned))).toEqual(loadConfig({}));
  });
});
