import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";

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
export async function buildConsole(): Promise<"built" | "up to date"> {
  const digest = inputsDigest();
  if (existsSync(STAMP) && readFileSync(STAMP, "utf8") === digest) return "up to date";
  await build({ configFile: join(ROOT, "console/vite.config.ts") });
  writeFileSync(STAMP, digest);
  return "built";
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const outcome = await buildConsole();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(outcome === "built" ? `console built in ${seconds} s\n` : "console up to date\n");
}
