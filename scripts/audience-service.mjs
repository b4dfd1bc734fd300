#!/usr/bin/env node
// The `audience-service` command (package.json "bin"; `npx audience-service --help` in a clone).
// It runs the CLI's TypeScript source through tsx, a dependency already: a clone needs no build
// step, and the command always runs the source the clone has. tsImport loads only this module
// tree through tsx, leaving the rest of the process as plain Node.
import { tsImport } from "tsx/esm/api";

const { main } = await tsImport("../src/cli/main.ts", import.meta.url);
process.exitCode = await main(process.argv.slice(2), process.env, process);
