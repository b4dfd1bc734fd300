import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { cliEnv, useFakeService } from "./fake-service.ts";
import { runCli } from "./run-cli.ts";

const startFake = useFakeService();

/** An address where nothing listens: a port the system gave out and took back. */
async function closedPortUrl(): Promise<string> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe("audience-service help", () => {
  it.each([[["--help"]], [["import", "--help"]], [["export", "-h"]], [["keys", "--help"]]])(
    "%j prints help with the exit codes",
    async (args) => {
      const run = await runCli(args);
      expect(run.code).toBe(0);
      expect(run.stdout.toString()).toMatch(/^(audience-service:|Usage: audience-service)/);
      expect(run.stdout.toString()).toContain("130  interrupted (Ctrl-C)");
    },
  );

  it("exits 2 for an unknown command or option, saying what was wrong", async () => {
    const command = await runCli(["imprt", "members.csv"]);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('unknown command "imprt"');

    const option = await runCli(["export", "--audeince", "x"]);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("'--audeince'");
  });
});

describe("audience-service configuration", () => {
  it("exits 2 without API_KEY, or with one that is not a workspace key, before any request", async () => {
    const missing = await runCli(["export"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("API_KEY is not set");

    const malformed = await runCli(["export"], { API_KEY: "not-a-key" });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("API_KEY is not a workspace API key");
  });

  it("exits 2 when the server refuses the key", async () => {
    const fake = await startFake();
    const other = await startFake();
    const run = await runCli(["export"], { ...cliEnv(fake), API_KEY: other.apiKey });

    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unauthorized: Send a valid API key");
    expect(run.stderr).toContain("Check API_KEY");
  });

  it("addresses the workspace the key names, or the one --workspace gives", async () => {
    const fake = await startFake({ file: Buffer.from("id,email\n") });
    const env = { ...cliEnv(fake), API_URL: `${fake.baseUrl}/` };
    expect((await runCli(["export"], env)).code).toBe(0);
    const other = await runCli(["export", "--workspace", "ws_Other"], env);

    expect(fake.requests.map((r) => r.path.split("/")[3])).toEqual([fake.workspaceId, fake.workspaceId, "ws_Other"]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain("forbidden: This API key cannot act on this workspace.");
  });

  it("exits 4 when the server cannot be reached, naming the address", async () => {
    const url = await closedPortUrl();
    const run = await runCli(["export"], {
      API_URL: url,
      API_KEY: `ak_${"a".repeat(20)}_${"b".repeat(20)}_${"c".repeat(32)}`,
    });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(
      `cannot reach the audience service at ${url} (ECONNREFUSED); is it running, and is API_URL right?`,
    );
  });

  it("reads the service's address from API_URL, and from AUDIENCE_SERVICE_URL when API_URL is not set", async () => {
    const fake = await startFake({ file: Buffer.from("id,email\n") });
    const unreachable = await closedPortUrl();
    const { API_URL: url, API_KEY } = cliEnv(fake);

    expect((await runCli(["export"], { API_URL: url, AUDIENCE_SERVICE_URL: unreachable, API_KEY })).code).toBe(0);
    expect((await runCli(["export"], { AUDIENCE_SERVICE_URL: url, API_KEY })).code).toBe(0);

    const wrong = await runCli(["export"], { API_URL: "ftp://example.com", API_KEY });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('API_URL must be an http:// or https:// URL, not "ftp://example.com"');
    const wrongOld = await runCli(["export"], { AUDIENCE_SERVICE_URL: "not a url", API_KEY });
    expect(wrongOld.stderr).toContain('AUDIENCE_SERVICE_URL is not a URL: "not a url"');
  });
});
