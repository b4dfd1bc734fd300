// docs/architecture.md names folders and files of the tree, and its feature table says which
// operations each feature answers: both are held to the tree and to the handlers as they are.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readContract } from "../../src/contract/contract.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const DOC = read("docs/architecture.md");

/** Names the document gives that are not files of the tree: made at run time, or an example to write. */
const NOT_IN_TREE = new Set([
  "artifacts/console/", // the browser tests' screenshots
  "test/events/list-audience-webhooks.test.ts", // "Adding an operation": the test that example adds
]);

/** Every file and folder of the repository as a path from its root (folders end in "/"). */
function tree(dir = ROOT, prefix = ""): string[] {
  return readdirSync(dir).flatMap((name) => {
    if ([".git", "node_modules", "dist", "artifacts", "data"].includes(name)) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory()
      ? [`${prefix}${name}/`, ...tree(path, `${prefix}${name}/`)]
      : [`${prefix}${name}`];
  });
}

/** The feature table's rows: folder → its Operations cell. */
function featureRows(): Map<string, string> {
  const rows = DOC.matchAll(/^\| `([a-z]+)\/` \| ([^|]+) \|/gm);
  return new Map([...rows].map(([, folder, operations]) => [folder as string, operations as string]));
}

describe("docs/architecture.md", () => {
  it("names only files and folders the tree has", () => {
    const paths = tree();
    // `name.ts`, `dir/name.ts`, `dir/`: anything in backticks that looks like a path, and the paths
    // that open the lines of the layout's code block. Globs (`*-repo.ts`) and placeholders
    // (`<f>-handlers.ts`) are patterns, not names.
    const quoted = [...DOC.matchAll(/`([A-Za-z0-9_./-]+(?:\.(?:ts|tsx|mjs|md|json|yaml|sql|prisma)|\/))`/g)].map(
      (m) => m[1] as string,
    );
    const layout = [...DOC.matchAll(/^((?:src|console|packages)\/[A-Za-z0-9_./-]*) /gm)].map((m) => m[1] as string);
    const names = [...new Set([...quoted, ...layout])].filter((name) => /[a-z]/.test(name) && !NOT_IN_TREE.has(name));
    expect(names.length).toBeGreaterThan(100);
    const exists = (name: string) => paths.some((path) => path === name || path.endsWith(`/${name}`));
    expect(names.filter((name) => !exists(name))).toEqual([]);
  });

  it("has a row in the feature table for every folder of src/features/ but membership, and no other", () => {
    const folders = readdirSync(join(ROOT, "src/features")).filter((name) => name !== "membership");
    expect([...featureRows().keys()].sort()).toEqual(folders.sort());
  });

  it("gives each feature the operations its handlers answer", () => {
    const operationIds = Object.values(readContract().paths)
      .flatMap((item) => Object.values(item).map((operation) => operation.operationId))
      .filter((id) => id !== undefined);
    for (const [folder, cell] of featureRows()) {
      const dir = join(ROOT, "src/features", folder);
      const handlers = readdirSync(dir).find((name) => name.endsWith("-handlers.ts"));
      if (handlers === undefined) continue; // exports: none of its own
      const code = readFileSync(join(dir, handlers), "utf8");
      const answered = operationIds.filter((id) => new RegExp(`\\b${id}\\b`).test(code));
      const listed = operationIds.filter((id) => new RegExp(`\\b${id}\\b`).test(cell));
      expect(listed, folder).toEqual(answered);
    }
  });
});
