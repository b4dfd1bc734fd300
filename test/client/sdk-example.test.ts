import { readFileSync } from "node:fs";
import { describe, expect } from "vitest";
import { it } from "../support/fixture.ts";
import { EXAMPLES_DIR, REPO_ROOT, runExample } from "./sdk-support.ts";

describe("the SDK example of docs/sdk.md", () => {
  it("is packages/client/examples/example.ts, word for word", () => {
    const guide = readFileSync(`${REPO_ROOT}docs/sdk.md`, "utf8");
    const example = readFileSync(`${REPO_ROOT}${EXAMPLES_DIR}example.ts`, "utf8");
    expect(guide).toContain(`\`\`\`ts\n${example}\`\`\``);
  });

  it("runs against the service, and again: the second run finds the audience the first created", async ({
    server,
    ws,
  }) => {
    const env = { API_URL: server.baseUrl, WORKSPACE_ID: ws.id, API_KEY: ws.key };
    const members = [
      "member mem_1003 ada@example.com Ada",
      "member mem_1002 (no e-mail)",
      "member mem_1001 (no e-mail)",
    ];

    const first = await runExample(env);
    const audienceId = first[0]?.replace(/^audience /, "") ?? "";
    expect(first).toEqual([`audience ${audienceId}`, "added 3, already members 0", ...members]);
    const audience = await ws.api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
      params: { path: { workspaceId: ws.id, audienceId } },
    });
    expect(audience).toEqual({ id: audienceId, name: "Weekly digest readers" });

    const second = await runExample(env);
    expect(second).toEqual([`audience ${audienceId}`, "added 0, already members 3", ...members]);
  });
});
