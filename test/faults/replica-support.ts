import { type Reply, type ServerProcess, send } from "../reliability/server-process.ts";

/** The server process in front of a primary and its replica, and the workspace of its first start. */
export interface Replicated {
  server: Pick<ServerProcess, "baseUrl">;
  ws: string;
  apiKey: string;
}

/**
 * A metric's value from GET /metrics: `name` alone sums every series of it, `name{labels}` is
 * that series; 0 when absent.
 */
export async function metric({ server }: Replicated, series: string): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const withLabels = series.includes("{");
  let total = 0;
  for (const line of text.split("\n")) {
    const matches = withLabels
      ? line.startsWith(`${series} `)
      : line.startsWith(`${series} `) || line.startsWith(`${series}{`);
    if (matches) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

/** Waits until the condition holds (checked every 50 ms), failing after 30 s. */
export async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; !(await condition()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface ReadRun {
  report: { reads: number; longestMs: number; statuses: Record<number, number> };
  /** The reads that were not answered 200. */
  failures: { path: string; status: number; body: unknown }[];
}

/**
 * Reads as clients do (pages, counts, the feed, a file; half of them with the token of the last
 * write, half without) while `during` runs, and for a second after it.
 */
export async function readsWhile(ctx: Replicated, during: () => Promise<void>): Promise<ReadRun> {
  const { ws } = ctx;
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    send(ctx.server, ctx.apiKey, method, path, body, headers);
  const created = await call("POST", `${ws}/audiences`, { name: `Readers ${Math.random().toString(36).slice(2)}` });
  const audience = created.body.id as string;
  let token = created.headers.get("consistency-token") ?? "";
  const paths = [
    `${ws}/audiences?limit=20`,
    `${ws}/audiences/${audience}?include=stats`,
    `${ws}/audiences/${audience}/members?limit=5`,
    `${ws}/members?limit=5`,
    `${ws}/events?limit=5`,
  ];
  const run: ReadRun = { report: { reads: 0, longestMs: 0, statuses: {} }, failures: [] };
  let running = true;
  const record = (path: string, started: number, answer: Reply) => {
    run.report.reads++;
    run.report.longestMs = Math.max(run.report.longestMs, Date.now() - started);
    run.report.statuses[answer.status] = (run.report.statuses[answer.status] ?? 0) + 1;
    if (answer.status !== 200) run.failures.push({ path, status: answer.status, body: answer.body });
  };
  const reader = async (withToken: boolean) => {
    for (let i = 0; running; i++) {
      const path = paths[i % paths.length] as string;
      const started = Date.now();
      record(path, started, await call("GET", path, undefined, withToken ? { "consistency-token": token } : {}));
    }
  };
  const writer = async () => {
    for (let i = 0; running; i++) {
      const added = await call("POST", `${ws}/audiences/${audience}/members`, { memberIds: [`reader_${i}`] });
      token = added.headers.get("consistency-token") ?? token;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const clients = [reader(true), reader(false), writer()];
  try {
    await during();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  } finally {
    running = false;
    await Promise.all(clients);
  }
  return run;
}
