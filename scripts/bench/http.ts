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

/**
 * A minimal keep-alive JSON client over node:http (loopback only), so the client adds as little
 * as possible to the latencies it measures.
 */
export function createClient(baseUrl: string, token: string, { timeoutMs = 600_000 } = {}) {
  const base = new URL(baseUrl);
  if (base.hostname !== "127.0.0.1") throw new Error(`the benchmark only targets 127.0.0.1, not ${base.hostname}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

  function request<T = unknown>(method: string, path: string, body?: unknown): Promise<HttpResult<T>> {
    const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { authorization: `Bearer ${token}` };
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
      req.on("error", reject);
      req.end(payload);
    });
  }

  /** A request that must answer with the expected status; anything else is an error of the run. */
  async function call<T = unknown>(
    method: string,
    path: string,
    body: unknown,
    expected: number,
  ): Promise<HttpResult<T>> {
    const result = await request<T>(method, path, body);
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

  return { call, download, close: () => agent.destroy() };
}

export type Client = ReturnType<typeof createClient>;
