// Comments and docs cite only documents the repository holds: a reader can open what the code
// says it follows. (Comments once cited a design document that was never part of it.)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (["node_modules", "dist", "generated"].includes(name)) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const TREES = ["src", "test", "scripts", "console/src", "packages/client/src", "packages/client/examples", "docs"];
const citing = [
  ...TREES.flatMap((tree) => filesUnder(join(ROOT, tree))),
  join(ROOT, "README.md"),
  join(ROOT, "CONTRIBUTING.md"),
].filter((path) => /\.(ts|tsx|mjs|md)$/.test(path));

describe("the documents cited", () => {
  it("are all in the repository", () => {
    const held = new Set(
      [...filesUnder(join(ROOT, "docs")), ...readdirSync(ROOT), ...readdirSync(join(ROOT, "packages/client"))]
        .filter((path) => path.endsWith(".md"))
        .map((path) => basename(path)),
    );
    const missing = citing.flatMap((path) =>
      [...readFileSync(path, "utf8").matchAll(/[A-Za-z0-9_-]+\.md\b/g)]
        .map((m) => m[0])
        .filter((name) => !held.has(name))
        .map((name) => `${relative(ROOT, path)}: ${name}`),
    );
    expect(citing.length).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });
});
