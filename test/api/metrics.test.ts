import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAudience, createWorkspace } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

// GET /metrics is not an operation of the contract (like /docs), so these use plain fetch.
const TOKEN = "metrics-token-0123456789";
let open: LiveServer;
let guarded: LiveServer;
beforeAll(async () => {
  [open, guarded] = await Promise.all([
    startLiveServer(),
    startLiveServer({ settings: { http: { metricsToken: TOKEN } } }),
  ]);
});
afterAll(() => Promise.all([open.close(), guarded.close()]));

const scrape = async (server: LiveServer, token?: string) => {
  const response = await fetch(
    `${server.baseUrl}/metrics`,
    token ? { headers: { authorization: `Bearer ${token}` } } : {},
  );
  return { response, text: await response.text() };
};

/** The value of one sample, by its name and labels as written in the exposition. */
const sample = (text: string, series: string) =>
  Number(new RegExp(`^${series.replace(/[{}"+()]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);

describe("GET /metrics", () => {
  it("counts requests by operation and status, with latency histograms, in Prometheus's format", async () => {
    const ws = await createWorkspace(open);
    const audienceId = await createAudience(ws);
    const before = await scrape(open);
    const series = 'audience_http_requests_total{operation="getAudience",method="GET",status="200"}';
    const counted = Number.isNaN(sample(before.text, series)) ? 0 : sample(before.text, series);
    await ws.api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
      params: { path: { workspaceId: ws.id, audienceId } },
    });
    const { response, text } = await scrape(open);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(text, series)).toBe(counted + 1);
    expect(text).toMatch(/^audience_http_request_duration_seconds_bucket\{le="0\.1",operation="getAudience"\} \d+$/m);
    expect(text).toContain("# TYPE audience_db_transaction_retries_total counter");
    expect(text).toContain("audience_process_resident_memory_bytes");
  });

  it.runIf(process.env.TEST_DATABASE_URL)(
    "reports each database pool's connections in use, idle and waiting",
    async () => {
      const { text } = await scrape(open);
      for (const pool of ["read", "write", "export"]) {
        for (const state of ["in_use", "idle", "waiting"]) {
          expect(sample(text, `audience_db_pool_connections{pool="${pool}",state="${state}"}`)).toBeGreaterThanOrEqual(
            0,
          );
        }
      }
    },
  );

  it("asks for METRICS_TOKEN when the server has one", async () => {
    const refused = await scrape(guarded);
    expect(refused.response.status).toBe(401);
    expect(refused.response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(refused.text)).toMatchObject({ status: 401, code: "unauthorized" });
    expect((await scrape(guarded, "wrong-token-0123456789")).response.status).toBe(401);
    expect((await scrape(guarded, TOKEN)).response.status).toBe(200);
  });
});
