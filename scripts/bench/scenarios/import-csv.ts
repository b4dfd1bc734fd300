import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type { components } from "../../../generated/api.d.ts";
import { type Client, createClient } from "../http.ts";
import { procStatusMb } from "../process-memory.ts";
import { rawSql, timed } from "../raw.ts";
import { createRawImportTable, RAW_IMPORT_TABLE, writeImportCsv } from "./import-file.ts";
import { rateRow, thousands } from "./result-rows.ts";
import { type Context, checkTime, createAudience, measure, ws } from "./scenario-context.ts";

type ImportJob = components["schemas"]["Import"];

/** How often the job is asked for while it runs: the measured time is at most this much late. */
const POLL_MS = 100;

/**
 * Scenario: a CSV file of --size new members (e-mail + 4 fields) imported into an audience of a
 * fresh workspace (POST …/imports, the file streamed from disk, then GET …/imports/:id until the
 * job ends), timed from the start of the upload to `succeeded`; beside PostgreSQL's own
 * COPY … FROM STDIN of the same file into a table shaped like members (import-file.ts), and with
 * the server's peak RSS while it runs. Last of the run: its million members would otherwise
 * sit in the search scenario's trigram index.
 */
export async function importCsv(ctx: Context): Promise<void> {
  const { size } = ctx.opts;
  const dir = await mkdtemp(join(os.tmpdir(), "audience-bench-import-"));
  try {
    const path = join(dir, "members.csv");
    const bytes = await writeImportCsv(path, size);
    const label = `${thousands(size)} new members, e-mail + 4 fields (${(bytes / 2 ** 20).toFixed(1)} MiB)`;
    const created = await ctx.admin.call<{ id: string }>("POST", "/v0/workspaces", { name: "Bench CSV import" }, 201);
    const workspaceId = created.body.id;
    const key = await ctx.admin.call<{ key: string }>(
      "POST",
      `${ws(ctx, workspaceId)}/api-keys`,
      { name: "bench" },
      201,
    );
    const api = createClient(ctx.service.baseUrl, key.body.key);
    try {
      await importFile(ctx, { workspaceId, apiKey: key.body.key, api, path, label });
    } finally {
      api.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface ImportTarget {
  workspaceId: string;
  apiKey: string;
  api: Client;
  path: string;
  label: string;
}

async function importFile(ctx: Context, { workspaceId, apiKey, api, path, label }: ImportTarget): Promise<void> {
  const { size } = ctx.opts;
  await rawSql.workspace(ctx.raw, workspaceId);
  const audienceId = await createAudience(ctx, "Bench: CSV import", workspaceId, api);

  ctx.log(`import: raw COPY FROM STDIN, then POST …/imports, of ${label}`);
  const target = await createRawImportTable(ctx.raw, workspaceId);
  const rawMs = await timed(() => ctx.raw.copyCsvFrom(target, path));
  const [copied] = await ctx.raw.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${RAW_IMPORT_TABLE}`);
  if (copied?.n !== size) throw new Error(`import: raw COPY wrote ${copied?.n} rows, not ${size}`);

  const rssBefore = procStatusMb(ctx.service.pid, "VmRSS") ?? 0;
  const done = measure(ctx);
  const started = performance.now();
  const queued = await upload(ctx, `${ws(ctx, workspaceId)}/imports?audienceId=${audienceId}`, apiKey, path);
  const job = await waitForImport(ctx, api, `${ws(ctx, workspaceId)}/imports/${queued.id}`, queued);
  const serviceMs = performance.now() - started;
  const used = done();
  if (job.status !== "succeeded" || job.rowsRead !== size || job.created !== size || job.rejected !== 0) {
    const { errors, ...counts } = job;
    throw new Error(
      `import: expected ${size} rows created, none rejected; the job: ${JSON.stringify(counts)}, ` +
        `first errors ${JSON.stringify(errors.slice(0, 3))}`,
    );
  }

  ctx.rows.push({
    ...rateRow(size, [serviceMs], [rawMs], {
      metric: "import_csv_new",
      label: `import ${label} from CSV`,
      baselineLabel: "COPY … FROM STDIN (FORMAT csv)",
      target: "import_csv",
    }),
    ...used,
  });
  ctx.rows.push({
    metric: "import_csv_peak_rss",
    label: `server peak RSS during the import of ${thousands(size)} members`,
    unit: "MB",
    value: used.serverPeakRssMb,
    baseline: rssBefore,
    baselineLabel: "server RSS before the import",
    ratio: null,
    target: "import_peak_rss",
    serverPeakRssMb: used.serverPeakRssMb,
  });
}

/** POST …/imports with the file as its body, streamed from disk; resolves to the queued job. */
async function upload(ctx: Context, url: string, apiKey: string, path: string): Promise<ImportJob> {
  const body = Readable.toWeb(createReadStream(path, { highWaterMark: 1 << 20 }));
  const res = await fetch(`${ctx.service.baseUrl}${url}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "text/csv" },
    body: body as ReadableStream<Uint8Array>,
    duplex: "half",
    // Unless redirects are refused, fetch tees a stream body to be able to send it again, and the
    // branch no one reads holds the whole file in memory (see packages/client/src/cli/upload.ts).
    redirect: "error",
  } as RequestInit);
  const text = await res.text();
  if (res.status !== 202)
    throw new Error(`import: POST …/imports: expected 202, got ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as ImportJob;
}

/** Asks for the job every POLL_MS until it is neither queued nor running. */
async function waitForImport(ctx: Context, api: Client, url: string, job: ImportJob): Promise<ImportJob> {
  let current = job;
  while (current.status === "queued" || current.status === "running") {
    checkTime(ctx);
    await sleep(POLL_MS);
    current = (await api.call<ImportJob>("GET", url, undefined, 200)).body;
  }
  return current;
}
