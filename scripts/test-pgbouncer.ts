// The API, SDK and event-feed/webhook test suites through a PgBouncer in transaction pooling mode, in front of the
// PostgreSQL server TEST_DATABASE_URL names: the service must start and work there with no
// special settings, LISTENing on a direct connection (TEST_DATABASE_LISTEN_URL).
//   TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test npm run test:pgbouncer [-- vitest args]
import { spawn } from "node:child_process";
import { startPgBouncer } from "../test/support/pgbouncer.ts";

const direct = process.env.TEST_DATABASE_URL;
if (!direct) {
  console.error("Set TEST_DATABASE_URL to the PostgreSQL server to put PgBouncer in front of.");
  process.exit(2);
}
const upstream = new URL(direct);
const bouncer = await startPgBouncer(upstream.hostname, Number(upstream.port || 5432));
const args = process.argv.slice(2);
console.log(`PgBouncer (transaction pooling) on port ${bouncer.port}, in front of ${upstream.host}`);
const vitest = spawn(
  "npx",
  ["vitest", "run", ...(args.length > 0 ? args : ["test/api", "test/client", "test/events"])],
  {
    stdio: "inherit",
    env: { ...process.env, TEST_DATABASE_URL: bouncer.url(direct), TEST_DATABASE_LISTEN_URL: direct },
  },
);
const code = await new Promise<number>((resolve) => vitest.once("exit", (status) => resolve(status ?? 1)));
await bouncer.stop();
process.exit(code);
