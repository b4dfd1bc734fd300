// The tests whose behaviour depends on transaction pooling, through a PgBouncer in transaction
// pooling mode in front of the PostgreSQL server TEST_DATABASE_URL names: the service must start
// and work there with no special settings, LISTENing on a direct connection
// (TEST_DATABASE_LISTEN_URL).
//   TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test npm run test:pgbouncer [-- vitest args]
// With arguments, vitest runs those instead (`-- test/api` runs the API suite through it).
import { spawn } from "node:child_process";
import { startPgBouncer } from "../test/support/pgbouncer.ts";

/**
 * What a pooler in transaction mode changes: a client's statements may run on a different server
 * connection in each transaction, so whatever a session keeps (prepared statements, settings,
 * LISTEN, session locks) is not there next time, and a cancel request must find the right server
 * connection. Each file below shows one of these; every other file's statements meet the pooler
 * as these do, and run on PostgreSQL directly in the PostgreSQL pass. test/faults/pgbouncer.test.ts
 * (in that pass) starts a PgBouncer of its own for two servers on one database.
 */
const POOLING = [
  // Prepared statements: every operation of the contract. A statement run under a name that this
  // server connection never prepared is refused (26000/42P05); the server then stops naming
  // statements and runs that read, or its whole write transaction, again, and every later
  // operation unnamed.
  "test/security/tenant-isolation.test.ts",
  // Session settings: the statement timeout and JIT set with each BEGIN (SET LOCAL), never on the
  // session, which the next transaction may not have.
  "test/store/transaction-settings.test.ts",
  // Timeouts: a read past its timeout is cancelled on the server, the cancel request forwarded by
  // PgBouncer to the server connection the client is linked to.
  "test/api/read-timeout.test.ts",
  // LISTEN/NOTIFY: another server's rename NOTIFYs from a pooled transaction and is heard on the
  // direct LISTEN connection.
  "test/api/get-audience.test.ts",
  // Advisory locks held to the end of a transaction, never to the end of a session: concurrent
  // uploads of one workspace, and two processes first-starting (and migrating) one database.
  "test/api/import-queue.test.ts",
  "test/reliability/first-start-race.test.ts",
  // Row locks shared between server processes (SKIP LOCKED): webhook deliveries claimed by
  // several processes, the feed's order under concurrent writers.
  "test/events/webhook-processes.test.ts",
  "test/events/feed-concurrency.test.ts",
];

const direct = process.env.TEST_DATABASE_URL;
if (!direct) {
  console.error("Set TEST_DATABASE_URL to the PostgreSQL server to put PgBouncer in front of.");
  process.exit(2);
}
const upstream = new URL(direct);
const bouncer = await startPgBouncer(upstream.hostname, Number(upstream.port || 5432));
const args = process.argv.slice(2);
console.log(`PgBouncer (transaction pooling) on port ${bouncer.port}, in front of ${upstream.host}`);
const vitest = spawn("npx", ["vitest", "run", ...(args.length > 0 ? args : POOLING)], {
  stdio: "inherit",
  env: { ...process.env, TEST_DATABASE_URL: bouncer.url(direct), TEST_DATABASE_LISTEN_URL: direct },
});
const code = await new Promise<number>((resolve) => vitest.once("exit", (status) => resolve(status ?? 1)));
await bouncer.stop();
process.exit(code);
