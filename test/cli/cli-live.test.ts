// The CLI end to end against the real server, as a script would run it (no terminal): an import
// with a bad row into an audience it creates, exports of it back, a refused key, and a new key
// made with the admin token.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMembers, createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { ADMIN_TOKEN, type LiveServer, startLiveServer } from "../support/live-server.ts";
import { runCli } from "./run-cli.ts";

const HEADER = "email,firstName,lastName,company,plan";
const GOOD_ROWS = [
  'ada@example.com,Ada,Lovelace,"Analytical Engines, Ltd",pro',
  'zoe@example.com,Zoë,"O""Brien","two\nlines",free',
  "grace@example.com,Grace,Hopper,,pro",
];
const BAD_ROW = "not-an-address,Bad,Row,,free";
// The bad row is the file's fifth line: the header, two one-line rows, a two-line row.
const CSV = `${HEADER}\n${GOOD_ROWS[0]}\n${GOOD_ROWS[1]}\n${BAD_ROW}\n${GOOD_ROWS[2]}\n`;
const BAD_LINE = 5;

let server: LiveServer;
let ws: TestWorkspace;
let env: Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), "cli-live-"));

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
  env = { API_URL: server.baseUrl, API_KEY: ws.key };
});
afterAll(() => server?.close());

describe("audience-service against a live server", () => {
  it("imports a file into a new audience, naming the rejected line, and exports it back", async () => {
    const file = join(dir, "members.csv");
    writeFileSync(file, CSV);

    const imported = await runCli(["import", file, "--audience", "Newsletter", "--interval", "0.1"], env);

    expect(imported.stderr).toMatch(/^Created the audience "Newsletter" \(aud_\w+\)\.$/m);
    expect(imported.stderr).toMatch(/^importing: /m);
    expect(imported.stdout.toString()).toMatch(/^Import imp_\w+ succeeded/);
    expect(imported.stdout.toString()).toMatch(/created: +3\n/);
    expect(imported.stdout.toString()).toMatch(/rejected: +1\n/);
    expect(imported.stdout.toString()).toContain(`line ${BAD_LINE}: `);
    expect(imported.code).toBe(1);

    const { results } = await ws.api.GET("/v0/workspaces/{workspaceId}/audiences", {
      params: { path: { workspaceId: ws.id }, query: { search: "Newsletter" } },
    });
    expect(results.map((audience) => audience.name)).toEqual(["Newsletter"]);

    const exported = await runCli(["export", "--audience", "newsletter"], env);
    expect(exported.code).toBe(0);
    const csv = exported.stdout.toString();
    expect(csv.split("\n")[0]).toBe("id,email,alternativeEmails,firstName,lastName,role,company,plan");
    for (const email of ["ada@example.com", "zoe@example.com", "grace@example.com"]) expect(csv).toContain(email);
    expect(csv).toContain('"Analytical Engines, Ltd"');
    expect(csv).toContain('"O""Brien"');
    expect(csv).not.toContain("not-an-address");
  });

  it("imports again into the same audience, merging nothing new, and exports NDJSON to a file", async () => {
    const file = join(dir, "again.csv");
    writeFileSync(file, `${HEADER}\n${GOOD_ROWS[0]}\n`);

    const again = await runCli(["import", file, "--audience", "NEWSLETTER", "--interval", "0.1"], env);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain("Created the audience");
    expect(again.stdout.toString()).toMatch(/unchanged: +1\n/);

    const output = join(dir, "members.ndjson");
    const exported = await runCli(
      ["export", "--audience", "Newsletter", "--format", "ndjson", "--output", output],
      env,
    );
    expect(exported.code).toBe(0);
    expect(exported.stdout.length).toBe(0);
    const members = readFileSync(output, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(members.map((m) => m.email).sort()).toEqual(["ada@example.com", "grace@example.com", "zoe@example.com"]);
    expect(members.find((m) => m.email === "zoe@example.com")?.fields).toMatchObject({
      firstName: "Zoë",
      lastName: 'O"Brien',
      company: "two\nlines",
    });
  });

  it("exports the whole workspace without --audience, and exits 2 for a key the server does not know", async () => {
    const exported = await runCli(["export"], env);
    expect(exported.code).toBe(0);
    expect(exported.stdout.toString().match(/@example\.com,/g)).toHaveLength(3);

    const unknown = `ak_${ws.id.slice(3)}_${"k".repeat(20)}_${"s".repeat(32)}`;
    const refused = await runCli(["export"], { ...env, API_KEY: unknown });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("unauthorized: ");
  });

  it("exports an audience's members as of an earlier instant, and exits 4 for one older than the record", async () => {
    const audienceId = await createAudience(ws);
    await addMembers(ws, audienceId, { memberIds: ["then-1"] });
    // An instant between the two adds: the record keeps microseconds, the contract milliseconds.
    const at = Date.now();
    while (Date.now() <= at + 1) await new Promise((resolve) => setImmediate(resolve));
    await addMembers(ws, audienceId, { memberIds: ["later-1"] });

    const then = await runCli(["export", "--audience-id", audienceId, "--as-of", new Date(at).toISOString()], env);
    expect(then.code).toBe(0);
    expect(then.stdout.toString()).toBe("id,email,alternativeEmails,firstName,lastName,role,company\nthen-1,,,,,,\n");
    expect(then.stderr).toContain("Exported 1 member");

    const old = await runCli(["export", "--audience-id", audienceId, "--as-of", "2020-01-01T00:00:00Z"], env);
    expect(old.code).toBe(4);
    expect(old.stderr).toContain("history_unavailable: asOf is older than the membership record keeps");
    expect(old.stdout.length).toBe(0);
  });

  it("keys create makes a working key for the workspace with ADMIN_TOKEN, printing it alone on stdout", async () => {
    const made = await runCli(["keys", "create", "--workspace", ws.id, "--name", "laptop"], {
      API_URL: server.baseUrl,
      ADMIN_TOKEN,
    });
    expect(made.code).toBe(0);
    const key = made.stdout.toString();
    expect(key).toMatch(new RegExp(`^ak_${ws.id.slice(3)}_\\w+\n$`));
    expect(made.stderr).toMatch(
      new RegExp(`^Created the API key key_\\w+ \\("laptop"\\) for ${ws.id}\\. It is shown only this once`),
    );

    const exported = await runCli(["export"], { API_URL: server.baseUrl, API_KEY: key.trim() });
    expect(exported.code).toBe(0);
    expect(exported.stdout.toString()).toMatch(/^id,email,/);
  });

  it("keys create without ADMIN_TOKEN, with a wrong one, or for an unknown workspace: exit 2 and one line", async () => {
    const args = ["keys", "create", "--workspace", ws.id];
    const missing = await runCli(args, { API_URL: server.baseUrl });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      "audience-service: ADMIN_TOKEN is not set. Set it to the admin token the server was started with (its ADMIN_TOKEN).\n",
    );

    const wrong = await runCli(args, { API_URL: server.baseUrl, ADMIN_TOKEN: "not-the-admin-token" });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      /^audience-service: the server refused ADMIN_TOKEN \(unauthorized\); it must be the admin token the server was started with\.\n$/,
    );

    const unknownWorkspace = `ws_${"Z".repeat(20)}`;
    const unknown = await runCli(["keys", "create", "--workspace", unknownWorkspace], {
      API_URL: server.baseUrl,
      ADMIN_TOKEN,
    });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      new RegExp(
        `^audience-service: the server has no workspace ${unknownWorkspace} \\(workspace_not_found\\); check --workspace\\.\n$`,
      ),
    );
    expect(missing.stdout.length + wrong.stdout.length + unknown.stdout.length).toBe(0);
  });
});
