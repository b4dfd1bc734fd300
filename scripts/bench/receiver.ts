import http from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";

/**
 * A webhook receiver in the bench process, on 127.0.0.1: answers 204 at once (or, `hang`, never),
 * and notes when each delivery arrived.
 */
export async function startReceiver({ hang = false } = {}) {
  const arrivals: { id: string; at: number }[] = [];
  let waiting: { count: number; resolve: () => void } | undefined;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      arrivals.push({ id: String(req.headers["webhook-id"]), at: performance.now() });
      if (waiting && arrivals.length >= waiting.count) waiting.resolve();
      if (!hang) res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    /** Resolves once `count` deliveries have arrived (or rejects after timeoutMs). */
    until(count: number, timeoutMs: number): Promise<void> {
      if (arrivals.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${arrivals.length} of ${count} deliveries arrived`)),
          timeoutMs,
        );
        waiting = {
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** The machine's own limit: a bare client POSTing to the receiver with `concurrency` requests in flight. */
export async function bareDeliveries(url: string, count: number, concurrency: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({ id: "evt_bench", type: "audience.created", sequence: 1, data: {} });
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await new Promise<void>((resolve, reject) => {
        const req = http.request(
          url,
          { method: "POST", agent, headers: { "content-type": "application/json" } },
          (res) => {
            res.resume();
            res.on("end", resolve);
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
  return count / ((performance.now() - started) / 1_000);
}
