import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The directory holding package.json, openapi/ and prisma/: the nearest one above this module,
 * which is src/ when run from source and dist/ once built (`npm run build`).
 */
export const PROJECT_ROOT = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("package.json not found above the server's code");
    dir = parent;
  }
  return dir;
})();
