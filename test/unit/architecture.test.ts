// The layout's rules (docs/architecture.md), checked over src/ (and the SDK's and console's sources) as they are: who may import whom,
// where SQL may be written, and the size of folders and files.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SRC = join(ROOT, "src");

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const sources = [
  ...filesUnder(SRC),
  ...filesUnder(join(ROOT, "packages/client/src")),
  ...filesUnder(join(ROOT, "console/src")),
]
  .filter((path) => /\.(ts|tsx|mjs)$/.test(path))
  .map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, "utf8") }));

/** Every module a file imports, as a path from the repository's root (or a package name). */
function importsOf(file: { path: string; text: string }): string[] {
  const specifiers = [...file.text.matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)].map((match) => match[1] as string);
  return specifiers.map((spec) =>
    spec.startsWith(".") ? relative(ROOT, resolve(ROOT, dirname(file.path), spec)) : spec,
  );
}

const featureOf = (path: string) => /^src\/features\/([^/]+)\//.exec(path)?.[1];

/** The import rule of docs/architecture.md; answers why an import breaks it, or undefined. */
function broken(from: string, to: string): string | undefined {
  if (from.startsWith("packages/")) return to.startsWith("src/") ? "the SDK package imports no server code" : undefined;
  if (from.startsWith("console/"))
    return to.startsWith("src/") ? "the console talks to the server through the SDK only" : undefined;
  if (to.startsWith("console/")) return "the server does not import the console";
  if (to.startsWith("@audience-service/client")) return "the server does not use the SDK";
  const http = to.startsWith("src/platform/http/") || to === "fastify" || to.startsWith("@fastify/");
  const feature = featureOf(from);
  const target = featureOf(to);
  if (from.startsWith("src/domain/") && to.startsWith("src/") && !to.startsWith("src/domain/"))
    return "the domain kernel imports only itself";
  if (/^src\/(platform|contract|config|domain)\//.test(from) && target) return "the platform imports no feature";
  if (from.startsWith("src/contract/") && to.startsWith("src/platform/db/"))
    return "the contract layer reads the contract; it imports no database";
  if (feature && target && target !== feature && target !== "membership")
    return "a feature imports no other feature (the composition root passes what it needs)";
  if (feature === "membership" && target && target !== "membership") return "membership imports no feature";
  if (http && (from.startsWith("src/platform/db/") || from.startsWith("src/domain/")))
    return "nothing below HTTP imports it";
  if (http && feature && !from.endsWith("-handlers.ts")) return "in a feature, only its handlers know HTTP";
  return undefined;
}

describe("the layout of src/", () => {
  it("keeps the import rule", () => {
    const violations = sources.flatMap((file) =>
      importsOf(file).flatMap((to) => {
        const why = broken(file.path, to);
        return why ? [`${file.path} → ${to}: ${why}`] : [];
      }),
    );
    expect(violations).toEqual([]);
  });

  it("finds the rule's violations (a check that cannot fail checks nothing)", () => {
    expect(broken("src/features/imports/import-runner.ts", "src/features/webhooks/webhook-repo.ts")).toMatch(
      /no other feature/,
    );
    expect(broken("src/features/members/member-service.ts", "src/platform/http/problem.ts")).toMatch(
      /only its handlers/,
    );
    expect(broken("src/platform/db/database.ts", "src/features/membership/member-repo.ts")).toMatch(/no feature/);
    expect(broken("src/domain/cursor.ts", "src/platform/db/pg-errors.ts")).toMatch(/only itself/);
    expect(broken("src/contract/contract.ts", "src/platform/db/read-scope.ts")).toMatch(/imports no database/);
    expect(broken("src/platform/replica-consistency.ts", "src/platform/db/read-scope.ts")).toBeUndefined();
    expect(broken("src/features/imports/import-service.ts", "@audience-service/client")).toMatch(/not use the SDK/);
    expect(broken("packages/client/src/cli/config.ts", "src/domain/api-key.ts")).toMatch(/no server code/);
    expect(broken("console/src/session.ts", "src/domain/api-key.ts")).toMatch(/through the SDK only/);
    expect(broken("console/src/api.tsx", "@audience-service/client")).toBeUndefined();
    expect(broken("src/app.ts", "console/src/session.ts")).toMatch(/does not import the console/);
    expect(broken("src/features/members/member-handlers.ts", "src/platform/http/file-responses.ts")).toBeUndefined();
    expect(
      broken("src/features/imports/import-chunk.ts", "src/features/membership/membership-service.ts"),
    ).toBeUndefined();
  });

  it("writes SQL only in repositories, their SQL fragments and the database platform", () => {
    const sql = /\$(query|execute)Raw|\bSELECT\b[\s\S]{0,200}\bFROM\b|\bINSERT INTO\b|\bDELETE FROM\b/;
    const outside = sources
      .filter((file) => sql.test(file.text))
      .map((file) => file.path)
      .filter((path) => !/-(repo|sql)\.ts$/.test(path) && !path.startsWith("src/platform/db/"));
    expect(outside).toEqual([]);
  });

  it("holds at most 20 files in a folder, and files of about 300 lines at most", () => {
    const folders = new Map<string, number>();
    for (const file of sources) folders.set(dirname(file.path), (folders.get(dirname(file.path)) ?? 0) + 1);
    expect([...folders].filter(([, count]) => count > 20)).toEqual([]);
    const long = sources.filter((file) => file.text.split("\n").length > 320).map((file) => file.path);
    expect(long).toEqual([]);
  });
});
