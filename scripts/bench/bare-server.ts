// The HTTP ceilings of this machine for the service's stack, in a process of their own:
//   /bare/audience      a bare Fastify route returning a small JSON object (getAudience's shape):
//                       no contract binding, no auth, no database;
//   /bare/audience-sql  the same plus the one SQL query getAudience needs, through the driver
//                       (pg on BARE_DATABASE_URL, or an in-memory PGlite with the migrations).
import Fastify from "fastify";
import pg from "pg";
import { applyMigrations, pgliteRunner } from "../../src/platform/db/migrate.ts";
import { openPglite } from "../../src/platform/db/pglite.ts";

const workspaceId = process.env.BARE_WORKSPACE_ID ?? "ws_benchBareWorkspace0";
const audienceId = process.env.BARE_AUDIENCE_ID ?? "aud_7Hq2mX9vLc4RtP0aZk1e";
const SELECT = "SELECT id, name FROM audiences WHERE workspace_id = $1 AND id = $2";

type Query = (sql: string, params: unknown[]) => Promise<{ id: string; name: string }[]>;
let query: Query | undefined;
let close = async () => {};
if (process.env.BARE_DATABASE_URL) {
  // The service's pool size (src/platform/db/database.ts).
  const pool = new pg.Pool({ connectionString: process.env.BARE_DATABASE_URL, max: 10 });
  query = async (sql, params) => (await pool.query(sql, params)).rows;
  close = () => pool.end();
} else if (process.env.BARE_PGLITE === "1") {
  const lite = await openPglite();
  await applyMigrations(pgliteRunner(lite));
  await lite.query("INSERT INTO workspaces (workspace_id, name) VALUES ($1, 'bare')", [workspaceId]);
  await lite.query("INSERT INTO audiences (workspace_id, id, name) VALUES ($1, $2, 'Weekly digest readers')", [
    workspaceId,
    audienceId,
  ]);
  query = async (sql, params) => (await lite.query<{ id: string; name: string }>(sql, params)).rows;
  close = () => lite.close();
}

const app = Fastify({ logger: false });
const audience = { id: audienceId, name: "Weekly digest readers" };
app.get("/bare/audience", async () => audience);
if (query) {
  const run = query;
  app.get("/bare/audience-sql", async (_request, reply) => {
    const [row] = await run(SELECT, [workspaceId, audienceId]);
    if (!row) return reply.code(404).send({ status: 404 });
    return { id: row.id, name: row.name };
  });
}

const address = await app.listen({ port: 0, host: "127.0.0.1" });
process.stdout.write(`bare route at ${address}/bare/audience${query ? " and /bare/audience-sql" : ""}\n`);
const stop = () =>
  void app
    .close()
    .then(close)
    .then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
