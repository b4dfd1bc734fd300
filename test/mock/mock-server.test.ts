import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { ApiError, createAudienceClient } from "@audience-service/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, runExample } from "../client/sdk-support.ts";
import { rejectionOf } from "../support/checked-client.ts";
import { checkResponse, documentedOperations, loadContract } from "../support/contract.ts";

// `npm run mock` (Prism on openapi/openapi.yaml), started as a developer would, in its own process
// group so that npm, tsx and Prism all stop together afterwards.
let mock: ChildProcess;
let output = "";
let baseUrl: string;
/** The export lines `npm run mock` prints, as a developer would paste them. */
let exported: Record<string, string>;

beforeAll(async () => {
  const port = await freePort();
  mock = spawn("npm", ["run", "--silent", "mock"], {
    cwd: REPO_ROOT,
    env: { ...process.env, MOCK_PORT: String(port) },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const listening = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`Prism is listening on http://127.0.0.1:${port}`)) resolve();
    };
    mock.stdout?.on("data", onData);
    mock.stderr?.on("data", onData);
    mock.on("exit", (code) => reject(new Error(`npm run mock exited with ${code}:\n${output}`)));
  });
  await listening;
  exported = Object.fromEntries([...output.matchAll(/export (\w+)=(\S+)/g)].map((m) => [m[1], m[2]]));
  baseUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  if (mock?.pid === undefined || mock.exitCode !== null) return;
  const exited = new Promise((resolve) => mock.once("exit", resolve));
  process.kill(-mock.pid, "SIGTERM");
  await exited;
});

describe("npm run mock", () => {
  it("prints the environment for the SDK example", () => {
    expect(exported).toEqual({
      API_URL: baseUrl,
      WORKSPACE_ID: expect.stringMatching(/^ws_/),
      API_KEY: expect.stringMatching(/^ak_/),
    });
  });

  it("runs the SDK example of docs/sdk.md unchanged, answering the contract's examples", async () => {
    const lines = await runExample({
      API_URL: exported.API_URL ?? "",
      WORKSPACE_ID: exported.WORKSPACE_ID ?? "",
      API_KEY: exported.API_KEY ?? "",
    });
    expect(lines).toEqual([
      "audience aud_4kP9sQ2wLm7XvB3nR8tY",
      "added 2, already members 0",
      "member mem_1003 ada@example.com Ada",
      "member mem_1001 (no e-mail)",
    ]);
  });

  it("answers every operation with its documented example, valid against the contract", async () => {
    const { document } = loadContract();
    const ids: Record<string, string> = {
      workspaceId: "ws_7Hq2mX9vLc4RtP0aZk1e",
      audienceId: "aud_4kP9sQ2wLm7XvB3nR8tY",
      keyId: "key_Qm3vT8nL2pXr6Wd1",
      memberId: "mem_1003",
    };
    for (const { method, path, operationId } of documentedOperations()) {
      const operation = document.paths[path][method.toLowerCase()];
      // The request body's own media type: JSON, or a file (an import's CSV) sent as its text.
      const [mediaType = "application/json", media] =
        Object.entries<any>(operation.requestBody?.content ?? {})[0] ?? [];
      const requestExample = Object.values<any>(media?.examples ?? {})[0];
      const json = mediaType === "application/json";
      const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => ids[name] ?? "x1");
      const response = await fetch(baseUrl + url, {
        method,
        headers: { authorization: "Bearer any-token", "content-type": mediaType },
        body: requestExample ? (json ? JSON.stringify(requestExample.value) : requestExample.value) : undefined,
      });
      const text = await response.text();
      const [status, documented] = Object.entries<any>(operation.responses).find(([s]) => s.startsWith("2")) ?? [];
      expect(response.status, operationId).toBe(Number(status));
      checkResponse({
        method,
        url,
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: text,
      });
      const example = Object.values<any>(documented.content?.["application/json"]?.examples ?? {})[0];
      if (example) expect(JSON.parse(text), operationId).toEqual(example.value);
      else expect(text, operationId).toBe("");
    }
  });

  it("rejects through the SDK with typed errors: forced, invalid request, missing key", async () => {
    const workspaceId = exported.WORKSPACE_ID ?? "";
    const params = { path: { workspaceId } };
    const forced = createAudienceClient({ baseUrl, apiKey: "any-token", headers: { Prefer: "code=409" } });
    const conflict = await rejectionOf(
      forced.POST("/v0/workspaces/{workspaceId}/audiences", { params, body: { name: "A" } }),
    );
    expect(conflict).toBeInstanceOf(ApiError);
    expect(conflict).toMatchObject({
      status: 409,
      code: "audience_name_taken",
      problem: { title: "Audience name taken" },
    });

    const api = createAudienceClient({ baseUrl, apiKey: "any-token" });
    const invalid = await rejectionOf(
      api.POST("/v0/workspaces/{workspaceId}/audiences", { params, body: { name: "" } }),
    );
    expect(invalid).toMatchObject({ status: 400, code: "invalid_request" });

    const anonymous = createAudienceClient({ baseUrl, apiKey: "" });
    const unauthorized = await rejectionOf(anonymous.GET("/v0/workspaces/{workspaceId}/audiences", { params }));
    expect(unauthorized).toMatchObject({ status: 401, code: "unauthorized" });
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}
