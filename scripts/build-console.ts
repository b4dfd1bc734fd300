import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
export const CONSOLE_OUT = join(ROOT, "dist/console");
/** What the console's bundle is made of: its sources, the SDK it bundles, and the locked versions. */
const INPUTS = ["console", "packages/client/src", "packages/client/generated", "package-lock.json"];
const STAMP = join(CONSOLE_OUT, ".inputs");

function files(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

/** A digest of every input file's path and content: a start whose console sources are unchanged skips the build. */
function inputsDigest(): string {
  const hash = createHash("sha256");
  for (const file of INPUTS.flatMap((path) => files(join(ROOT, path)))) {
    hash.update(relative(ROOT, file)).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex");
}

/** Builds the console into dist/console unless it was built from the same inputs; says which. */
export function buildConsole(): "built" | "up to date" {
  const digest = inputsDigest();
  if (existsSync(STAMP) && readFileSync(STAMP, "utf8") === digest) return "up to date";
  // In a process of its own with NODE_ENV=production: under a test runner (NODE_ENV=test) Vite
  // would bundle React's development build.
  execFileSync(
    process.execPath,
    [join(ROOT, "node_modules/vite/bin/vite.js"), "build", "--config", "console/vite.config.ts"],
    {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: "production" },
      stdio: "inherit",
    },
  );
  writeFileSync(STAMP, digest);
  return "built";
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const outcome = buildConsole();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(outcome === "built" ? `console built in ${seconds} s\n` : "console up to date\n");
}
