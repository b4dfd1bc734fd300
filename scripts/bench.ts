// `npm run bench`: the service's performance against this machine's raw limits. Builds its own
// data, runs each scenario of the registry (scripts/bench/registry.ts) beside its raw baseline
// (the same work done by single SQL statements through the driver, or by a bare Fastify route),
// judges each row by the table of targets (scripts/bench/targets.ts), prints a table and one JSON
// line per row (scripts/bench/results.ts), and renders result lines as markdown (--markdown).
// Targets are reported, never asserted: the exit code is non-zero only when the run itself fails.
//
//   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test npm run bench [-- --quick] [--out=FILE]
//   npm run bench -- --embedded [--quick]
//   npm run bench -- --markdown FILE…
import { writeFile } from "node:fs/promises";
import os from "node:os";
import { renderHeadline, renderRegistry, renderResults } from "./bench/markdown.ts";
import { type BenchOptions, parseOptions } from "./bench/options.ts";
import { SCENARIO_NAMES } from "./bench/registry.ts";
import type { ResultLine } from "./bench/report.ts";
import { formatTable } from "./bench/report.ts";
import { buildCommit, machine, readResults, toLines } from "./bench/results.ts";
import { plan, type Recorded, runScenarios } from "./bench/runner.ts";
import { openSession } from "./bench/session.ts";
import { cleanUp, log, openStores, type Stores } from "./bench/stores.ts";

/** The options as given, for the results: how to run the same again (wherever it writes). */
const ARGS = process.argv
  .slice(2)
  .filter((arg, i, all) => !arg.startsWith("--out") && all[i - 1] !== "--out")
  .join(" ");

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2), process.env, SCENARIO_NAMES);
  if (opts.list) {
    process.stdout.write(`${renderRegistry()}\n`);
    return 0;
  }
  if (opts.markdown.length > 0) {
    const lines = await readResults(opts.markdown);
    process.stdout.write(`${opts.headline ? renderHeadline(lines) : renderResults(lines)}\n`);
    return 0;
  }
  const planned = plan(opts);
  for (const note of planned.notes) log(note);
  log(`scenarios: ${planned.scenarios.map((s) => s.name).join(", ")}`);
  const started = new Date();
  const loadAtStart = os.loadavg()[0] ?? 0;
  const stores = await openStores(opts);
  const { ctx, resources } = await openSession(opts, stores, started.getTime());
  const recorded: Recorded[] = [];
  // Interrupted, the run still reports the scenarios it finished.
  reportSoFar = () => report(opts, recorded, stores, started, loadAtStart);
  try {
    await runScenarios(planned, ctx, resources, recorded);
  } catch (error) {
    if (recorded.length > 0) await report(opts, recorded, stores, started, loadAtStart);
    // What the server said last: a failed request is often the server's failure, told only there.
    log(`the service's last output lines:\n${ctx.service.tail()}`);
    throw error;
  }
  await report(opts, recorded, stores, started, loadAtStart);
  return 0;
}

/** The table, then the result lines, on stdout; the lines also into --out. */
async function report(
  opts: BenchOptions,
  recorded: Recorded[],
  { describe, settings }: Stores,
  started: Date,
  loadAtStart: number,
): Promise<void> {
  const seconds = Math.round((Date.now() - started.getTime()) / 1_000);
  const loadAtEnd = os.loadavg()[0] ?? 0;
  const lines: ResultLine[] = toLines(recorded, {
    store: opts.store,
    size: opts.size,
    batch: opts.batch,
    quick: opts.quick,
    commit: buildCommit(),
    run: {
      started_at: started.toISOString(),
      describe: settings,
      args: ARGS,
      seconds,
      load_start: Number(loadAtStart.toFixed(1)),
      load_end: Number(loadAtEnd.toFixed(1)),
      machine: machine(),
    },
  });
  const { cpus, cpu, mem_gib, node } = machine();
  const title =
    `audience-service benchmark: ${describe}; ${opts.size.toLocaleString("en-US")} members, ` +
    `${opts.batch.toLocaleString("en-US")} per request${opts.quick ? " (--quick)" : ""}\n` +
    `machine: ${cpus} × ${cpu}, ${mem_gib} GiB, node ${node}; run took ${seconds} s; ` +
    `1-min load average ${loadAtStart.toFixed(1)} at start, ${loadAtEnd.toFixed(1)} at the end`;
  process.stdout.write(`\n${formatTable(lines, title)}\n\n`);
  const json = lines.map((line) => `${JSON.stringify(line)}\n`).join("");
  process.stdout.write(json);
  if (opts.out) {
    await writeFile(opts.out, json);
    log(`result lines written to ${opts.out} (render them: npm run bench -- --markdown ${opts.out})`);
  }
}

/** Reports what the run measured so far (its finished scenarios), once the run has begun. */
let reportSoFar: (() => Promise<void>) | undefined;

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // Once: a second signal while the run reports changes nothing.
    if (stopping) return;
    stopping = true;
    log(`${signal}: reporting the scenarios finished, then cleaning up`);
    const reported = reportSoFar?.().catch((error: unknown) => log(`could not report: ${String(error)}`));
    void Promise.resolve(reported)
      .then(cleanUp)
      .then(() => process.exit(130));
  });
}

let code = 1;
try {
  code = await main();
} catch (error) {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  code = 1;
}
await cleanUp();
process.exit(code);
