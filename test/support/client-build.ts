import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const CLIENT_DIR = join(ROOT, "packages/client");
const INPUTS = ["src", "examples", "generated", "bin", "package.json", "tsconfig.json"];
const OUTPUTS = ["dist", "examples/dist"];

/** Every file under these paths (of packages/client), the build's outputs left out of its inputs. */
function files(paths: string[], skip: string[] = []): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    if (skip.includes(path) || !existsSync(path)) return;
    if (!statSync(path).isDirectory()) return void found.push(path);
    for (const name of readdirSync(path)) walk(join(path, name));
  };
  for (const path of paths) walk(join(CLIENT_DIR, path));
  return found;
}

const mtimes = (paths: string[]) => paths.map((path) => statSync(path).mtimeMs);

/**
 * vitest's global setup: builds the SDK package (`npm run build` in packages/client) unless its
 * build is newer than every file it is built from. The tests use the package as a consumer does:
 * imported by name (its dist/), its CLI through its bin, its examples with plain node. Once per
 * run, before any test file starts, so no test reads a build while another writes it.
 */
export default function setup() {
  const global = globalThis as { clientBuilt?: boolean };
  if (global.clientBuilt) return; // one global setup per vitest project, one build per run
  global.clientBuilt = true;
  const outputs = files(OUTPUTS);
  const built = OUTPUTS.every((path) => existsSync(join(CLIENT_DIR, path)));
  const inputs = files(
    INPUTS,
    OUTPUTS.map((path) => join(CLIENT_DIR, path)),
  );
  if (built && Math.min(...mtimes(outputs)) > Math.max(...mtimes(inputs))) return;
  execFileSync("npm", ["run", "--silent", "build"], { cwd: CLIENT_DIR, stdio: "inherit" });
}
