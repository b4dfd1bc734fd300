// Regenerates everything generated from its sources: the contract's TypeScript types
// (openapi-typescript) for the server (generated/) and for the SDK package (packages/client/, which
// ships them in its tarball and so cannot reach outside its folder), the SDK package's version (the
// contract's info.version), and the Prisma client (prisma generate). Works offline.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parse } from "yaml";

const run = (command: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  execFileSync(command, args, { stdio: "inherit", env });

run("npx", ["--no-install", "openapi-typescript", "openapi/openapi.yaml", "--output", "generated/api.d.ts"]);
// Written only when it changed: a newer file makes the tests' global setup rebuild the package.
const types = readFileSync("generated/api.d.ts", "utf8");
const packageTypes = "packages/client/generated/api.d.ts";
if (!existsSync(packageTypes) || readFileSync(packageTypes, "utf8") !== types) writeFileSync(packageTypes, types);

// The SDK is versioned with the contract it was generated from. The lock file records a
// workspace's version too, so both change together (and `npm ci` keeps matching).
const { version } = (parse(readFileSync("openapi/openapi.yaml", "utf8")) as { info: { version: string } }).info;
const setJson = (file: string, update: (json: any) => void) => {
  const text = readFileSync(file, "utf8");
  const json = JSON.parse(text);
  update(json);
  const next = `${JSON.stringify(json, null, 2)}\n`;
  if (next !== text) writeFileSync(file, next);
};
setJson("packages/client/package.json", (pkg) => {
  pkg.version = version;
});
setJson("package-lock.json", (lock) => {
  lock.packages["packages/client"].version = version;
});

// `prisma generate` does not need Prisma's native schema engine, but the CLI tries to download it
// unless PRISMA_SCHEMA_ENGINE_BINARY names an existing file. Any file will do for generation.
const engine = process.env.PRISMA_SCHEMA_ENGINE_BINARY;
run("npx", ["--no-install", "prisma", "generate"], {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: engine && existsSync(engine) ? engine : process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: "1",
  CHECKPOINT_DISABLE: "1",
});
