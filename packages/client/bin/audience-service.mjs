#!/usr/bin/env node
// The `audience-service` command (this package's "bin"): the CLI as built to dist/ by `npm run
// build`. In the service's repository the root build (and the test suite's setup) builds it, so
// `npx audience-service --help` works there as it does wherever the package is installed.
import { main } from "../dist/cli/main.js";

process.exitCode = await main(process.argv.slice(2), process.env, process);
