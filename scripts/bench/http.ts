import http from "node:http";
import { performance } from "node:perf_hooks";

interface HttpResult<T = unknown> {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: T;
  /** From writing the request to the last byte of the answer. */
  ms: number;
}

class HttpError extends Error {
  override name = "HttpError";
}

/** A kept-alive connection found closed by the server as the request was written to it. */
class StaleSocket extends Error {
  override name = "StaleSocket";
}

/**
 * A minimal keep-alive JSON client over node:http (loopback only), so the client adds as little
 * as possible to the latencies it measures.
 */
export function createClient(baseUrl: string, token: string, { timeoutMs = 600_000 } = {}) {
  const base = new URL(baseUrl);
  if (base.hostname !== "127.0.0.1") throw new Error(`the benchmark only targets 127.0.0.1, not ${base.hostname}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

  /**
   * A request, whatever it answers; it fails only when no answer comes within timeoutMs. Sent
   * again once when it went out on a kept-alive connection the server had closed meanwhile: the
   * embedded raw baseline runs in this process and holds its event loop, sometimes past the
   * server's keep-alive timeout, so the close is noticed only when the request is written
   * (EPIPE, ECONNRESET), and the server never read the request.
   */
  async function request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<HttpResult<T>> {
    try {
      return await requestOnce<T>(method, path, body, extra);
    } catch (error) {
      if (!(error instanceof StaleSocket)) throw error;
      return requestOnce<T>(method, path, body, extra);
    }
  }

  function requestOnce<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<HttpResult<T>> {
    const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...extra, authorization: `Bearer ${token}` };
      if (payload !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = Buffer.byteLength(payload);
      }
      const started = performance.now();
      const req = http.request(
        { host: base.hostname, port: base.port, method, path, headers, agent, timeout: timeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            const ms = performance.now() - started;
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            if (/json/.test(res.headers["content-type"] ?? "") && text !== "") {
              try {
                parsed = JSON.parse(text);
              } catch {
                parsed = text;
              }
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed as T, ms });
          });
        },
      );
      req.on("timeout", () => req.destroy(new HttpError(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      req.on("error", (error: NodeJS.ErrnoException) => {
        const stale = req.reusedSocket && (error.code === "EPIPE" || error.code === "ECONNRESET");
        reject(stale ? new StaleSocket(error.message) : error);
      });
      req.end(payload);
    });
  }

  /** A request that must answer with the expected status; anything else is an error of the run. */
  async function call<T = unknown>(
    method: string,
    path: string,
    body: unknown,
    expected: number,
    headers?: Record<string, string>,
  ): Promise<HttpResult<T>> {
    const result = await request<T>(method, path, body, headers);
    if (result.status !== expected) {
      const detail = typeof result.body === "string" ? result.body : JSON.stringify(result.body);
      throw new HttpError(`${method} ${path}: expected ${expected}, got ${result.status}: ${detail.slice(0, 500)}`);
    }
    return result;
  }

  /**
   * A GET of a file, read to the end and counted instead of kept (an export of a million members
   * is tens of megabytes): its status, content type, bytes and lines.
   */
  function download(path: string, accept: string) {
    return new Promise<{ status: number; type: string; bytes: number; lines: number; ms: number }>(
      (resolve, reject) => {
        const started = performance.now();
        const headers = { authorization: `Bearer ${token}`, accept };
        const req = http.get(
          { host: base.hostname, port: base.port, path, headers, agent, timeout: timeoutMs },
          (res) => {
            let bytes = 0;
            let lines = 0;
            res.on("data", (chunk: Buffer) => {
              bytes += chunk.length;
              for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
            });
            res.on("error", reject);
            res.on("end", () => {
              const type = res.headers["content-type"] ?? "";
              resolve({ status: res.statusCode ?? 0, type, bytes, lines, ms: performance.now() - started });
            });
          },
        );
        req.on("timeout", () => req.destroy(new HttpError(`GET ${path}: no answer within ${timeoutMs} ms`)));
        req.on("error", reject);
      },
    );
  }

  return { call, request, download, close: () => agent.destroy() };
}

export type Client = ReturnType<typeof createClient>;

/** The embedded store's statistics checks so far, from the service's /metrics. */
async function statisticsChecks(serviceUrl: string): Promise<number> {
  const text = await (await fetch(new URL("/metrics", serviceUrl))).text();
  return Number(/^audience_db_statistics_checks_total (\d+)/m.exec(text)?.[1] ?? 0);
}

/**
 * Waits until the embedded service has checked its tables' statistics `count` more times. Each
 * check ANALYZEs what changed enough by then; the first may have begun before the call, so two
 * cover everything written before it.
 */
export async function statisticsChecked(serviceUrl: string, count: number): Promise<void> {
  const target = (await statisticsChecks(serviceUrl)) + count;
  const deadline = Date.now() + 60_000;
  while ((await statisticsChecks(serviceUrl)) < target) {
    if (Date.now() > deadline) throw new Error("the service did not check its statistics within 60 s");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
