// Regenerates everything under generated/ from its sources: the contract's TypeScript types
// (openapi-typescript) and the Prisma client (prisma generate). Works offline.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const run = (command: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  execFileSync(command, args, { stdio: "inherit", env });

run("npx", ["--no-install", "openapi-typescript", "openapi/openapi.yaml", "--output", "generated/api.d.ts"]);

// `prisma generate` does not need Prisma's native schema engine, but the CLI tries to download it
// unless PRISMA_SCHEMA_ENGINE_BINARY names an existing file. Any file will do for generation.
const engine = process.env.PRISMA_SCHEMA_ENGINE_BINARY;
run("npx", ["--no-install", "prisma", "generate"], {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: engine && existsSync(engine) ? engine : process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: "1",
  CHECKPOINT_DISABLE: "1",
});
