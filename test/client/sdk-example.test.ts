import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";
import { REPO_ROOT, runExample } from "./sdk-support.ts";

let server: LiveServer;
let ws: TestWorkspace;

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
});
afterAll(() => server.close());

describe("the README's SDK example", () => {
  it("is src/client/example.ts, word for word", () => {
    const readme = readFileSync(`${REPO_ROOT}README.md`, "utf8");
    const example = readFileSync(`${REPO_ROOT}src/client/example.ts`, "utf8");
    expect(readme).toContain(`\`\`\`ts\n${example}\`\`\``);
  });

  it("runs against the service, and again: the second run finds the audience the first created", async () => {
    const env = { API_URL: server.baseUrl, WORKSPACE_ID: ws.id, API_KEY: ws.key };
    const members = [
      "member mem_1003 ada@example.com Ada",
      "member mem_1002 (no e-mail)",
      "member mem_1001 (no e-mail)",
    ];

    const first = await runExample(env);
    const audienceId = first[0]?.replace(/^audience /, "") ?? "";
    expect(first).toEqual([`audience ${audienceId}`, "added 3, already members 0", ...members]);
    const audience = await ws.call("GET", `/audiences/${audienceId}`);
    expect(audience.body).toEqual({ id: audienceId, name: "Weekly digest readers" });

    const second = await runExample(env);
    expect(second).toEqual([`audience ${audienceId}`, "added 0, already members 3", ...members]);
  });
});
