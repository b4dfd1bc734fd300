import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, type FakeService, type FakeServiceOptions, useFakeService } from "./fake-service.ts";
import { runCli, startCli } from "./run-cli.ts";

/** About 1.5 MiB of CSV, with what CSV makes hard: commas, quotes, line breaks and non-ASCII in values. */
function csvFile(): Buffer {
  const lines = ["id,email,alternativeEmails,firstName,lastName,role,company,plan"];
  for (let i = 0; i < 15_000; i++) {
    lines.push(
      `mem_${i},user${i}@example.com,a${i}@example.org;b${i}@example.org,Zoë,"O""Brien","line one\nline two","Engines, Ltd",prö`,
    );
  }
  return Buffer.from(`${lines.join("\n")}\n`);
}

const startFake = useFakeService();
let fake: FakeService;

async function exportWith(options: FakeServiceOptions, args: string[]) {
  fake = await startFake(options);
  return runCli(["export", "--interval", "0.02", ...args], cliEnv(fake));
}

describe("audience-service export", () => {
  it("writes exactly the bytes the server sends to stdout, with progress on stderr only", async () => {
    const file = csvFile();
    const run = await exportWith({ audiences: [{ name: "Newsletter" }], file, totalCount: 15_000 }, [
      "--audience",
      "NEWSLETTER",
    ]);

    expect(run.code).toBe(0);
    expect(run.stdout.equals(file)).toBe(true);
    const [download] = fake
      .requestsTo("GET", `/audiences/${fake.audiences[0]?.id}/members`)
      .filter((r) => !r.query.has("limit"));
    expect(download?.headers.accept).toBe("text/csv");
    // The values exactly as stored, so that the file imports back as it was.
    expect(download?.query.get("csvEscape")).toBe("none");
    // Rows are counted as the bytes pass, line breaks inside quoted values not ending one.
    expect(run.stderr).toMatch(/^exporting: [\d,]+ of 15,000 rows \(\d+%\)/m);
    expect(run.stderr).toContain("Exported 15,000 members (1.8 MiB).");
  });

  it("exports the workspace's members as NDJSON into --output, the file appearing only when complete", async () => {
    const file = Buffer.from(`${'{"id":"mem_1","email":"zoë@example.com"}\n'.repeat(40_000)}`);
    const dir = mkdtempSync(join(tmpdir(), "cli-export-"));
    const output = join(dir, "members.ndjson");
    const run = await exportWith({ file }, ["--format", "ndjson", "--output", output]);

    expect(run.code).toBe(0);
    expect(run.stdout.length).toBe(0);
    expect(readFileSync(output).equals(file)).toBe(true);
    expect(readdirSync(dir)).toEqual(["members.ndjson"]);
    const [download] = fake.requestsTo("GET", "/members").filter((r) => !r.query.has("limit"));
    expect(download?.path).toBe(`/v0/workspaces/${fake.workspaceId}/members`);
    expect(download?.headers.accept).toBe("application/x-ndjson");
  });

  it("stops quietly with exit 0 when the reader closes the pipe early, as `| head` does", async () => {
    fake = await startFake({ file: csvFile(), totalCount: 15_000 });
    const cli = startCli(["export"], cliEnv(fake));
    cli.child.stdout?.once("data", () => cli.child.stdout?.destroy());
    const run = await cli.result;

    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain("audience-service:");
  });

  it("Ctrl-C stops an export midway with exit 130, leaving no file behind", async () => {
    fake = await startFake({ file: csvFile(), stallFile: true, totalCount: 15_000 });
    const dir = mkdtempSync(join(tmpdir(), "cli-export-"));
    const cli = startCli(["export", "--output", join(dir, "out.csv"), "--interval", "0.02"], cliEnv(fake));

    await cli.stderrMatches(/^exporting: /m);
    cli.child.kill("SIGINT");
    const run = await cli.result;

    expect(run.code).toBe(130);
    expect(run.stderr).toContain("Interrupted: the export is incomplete");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("exits 4 when the connection is lost midway, writing no file", async () => {
    fake = await startFake({ file: csvFile(), stallFile: true, totalCount: 15_000 });
    const dir = mkdtempSync(join(tmpdir(), "cli-export-"));
    const cli = startCli(["export", "--output", join(dir, "out.csv"), "--interval", "0.02"], cliEnv(fake));

    await cli.stderrMatches(/^exporting: /m);
    await fake.close();
    const run = await cli.result;

    expect(run.code).toBe(4);
    expect(run.stderr).toContain(`audience-service: the connection to the audience service at ${fake.baseUrl} failed`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("exits 2 when no unarchived audience has the name", async () => {
    const run = await exportWith({ audiences: [{ name: "Newsletter", isArchived: true }] }, [
      "--audience",
      "Newsletter",
    ]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no unarchived audience is named "Newsletter"');
    expect(run.stdout.length).toBe(0);
  });

  it("passes --as-of to the count and to the file, as an ISO 8601 instant", async () => {
    const run = await exportWith({ audiences: [{ name: "Trial" }], file: Buffer.from("id\nmem_1\n"), totalCount: 1 }, [
      "--audience",
      "Trial",
      "--as-of",
      "2026-11-03T10:00:00+01:00",
    ]);

    expect(run.code).toBe(0);
    const requests = fake.requestsTo("GET", `/audiences/${fake.audiences[0]?.id}/members`);
    expect(requests.map((r) => [r.query.has("limit"), r.query.get("asOf")])).toEqual([
      [true, "2026-11-03T09:00:00.000Z"],
      [false, "2026-11-03T09:00:00.000Z"],
    ]);
  });

  it("exits 2 for --as-of without an audience, or not a date and time with a zone", async () => {
    for (const [args, message] of [
      [["--as-of", "2026-11-03T09:00:00Z"], "--as-of needs --audience or --audience-id"],
      [["--audience", "Trial", "--as-of", "2026-11-03"], "--as-of must be a date and time with a zone"],
      [["--audience", "Trial", "--as-of", "yesterday"], "--as-of must be a date and time with a zone"],
    ] as const) {
      const run = await exportWith({ audiences: [{ name: "Trial" }] }, [...args]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(message);
      expect(fake.requestsTo("GET", "/members")).toEqual([]);
    }
  });
});
