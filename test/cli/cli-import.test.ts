import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, type FakeService, type FakeServiceOptions, useFakeService } from "./fake-service.ts";
import { runCli } from "./run-cli.ts";

const CSV =
  'email,firstName,company\nada@example.com,Ada,"Engines, Ltd"\ngrace@example.com,Grace,\nbad-address,Bad,\nlinus@example.com,Linus,\n';
const dir = mkdtempSync(join(tmpdir(), "cli-import-"));
const file = join(dir, "members.csv");
writeFileSync(file, CSV);

const startFake = useFakeService();
let fake: FakeService;

async function importWith(options: FakeServiceOptions, args: string[]) {
  fake = await startFake(options);
  return runCli(["import", file, "--interval", "0.02", ...args], cliEnv(fake));
}

const counts = { merged: 0, unchanged: 0, rejected: 0 };

describe("audience-service import", () => {
  it("streams the file into the audience named, prints progress lines as the job runs, and a summary", async () => {
    const run = await importWith(
      {
        audiences: [{ name: "Newsletter" }, { name: "Newsletter archive" }],
        jobSteps: [
          { status: "running", rowsRead: 1, created: 1 },
          { status: "running", rowsRead: 3, created: 3 },
          { status: "succeeded", rowsRead: 4, created: 3, merged: 1 },
        ],
      },
      ["--audience", "newsletter"],
    );

    expect(run.stderr).toMatch(/^importing: 1 of ~4 rows \(25%\), \d+ rows\/s, ETA /m);
    expect(run.stderr).toMatch(/^importing: 3 of ~4 rows \(75%\)/m);
    expect(run.stdout.toString()).toMatch(/succeeded/);
    expect(run.stdout.toString()).toMatch(/created: +3\n +merged: +1\n +unchanged: +0\n +rejected: +0/);
    expect(run.code).toBe(0);

    const [upload] = fake.requestsTo("POST", "/imports");
    expect(upload?.body.toString()).toBe(CSV);
    expect(upload?.headers["content-type"]).toBe("text/csv");
    // Streamed: sent in chunks of unknown length, not as one buffer with a Content-Length.
    expect(upload?.headers["transfer-encoding"]).toBe("chunked");
    expect(upload?.query.get("audienceId")).toBe(fake.audiences[0]?.id);
    // The job is known by the file's name, not its path.
    expect(upload?.query.get("name")).toBe("members.csv");
    expect(fake.requestsTo("POST", "/audiences")).toEqual([]);
  });

  it("creates the audience when no unarchived audience has the name, and says so", async () => {
    const run = await importWith({ audiences: [{ name: "Newsletter", isArchived: true }, { name: "Newsletters" }] }, [
      "--audience",
      "Newsletter",
    ]);

    expect(run.code).toBe(0);
    const created = fake.audiences.find((a) => a.name === "Newsletter" && !a.isArchived);
    expect(created).toBeDefined();
    expect(run.stderr).toContain(`Created the audience "Newsletter" (${created?.id}).`);
    expect(fake.requestsTo("POST", "/imports")[0]?.query.get("audienceId")).toBe(created?.id);
  });

  it("imports without an audience when none is named", async () => {
    const run = await importWith({}, []);
    expect(run.code).toBe(0);
    expect(fake.requestsTo("POST", "/imports")[0]?.query.has("audienceId")).toBe(false);
  });

  it("exits 1 when rows were rejected, listing their lines and saying how many are not listed", async () => {
    const errors = [{ line: 4, message: "email: not a valid e-mail address" }];
    const run = await importWith(
      { jobSteps: [{ ...counts, status: "succeeded", rowsRead: 4, created: 3, rejected: 120, errors }] },
      [],
    );

    expect(run.code).toBe(1);
    expect(run.stdout.toString()).toContain("Rejected rows:\n  line 4: email: not a valid e-mail address\n");
    expect(run.stdout.toString()).toContain("… and 119 more (the server lists the first 100).");
  });

  it("exits 3 when the job fails, with the server's reason", async () => {
    const failureReason = "The audience was archived during the import.";
    const run = await importWith({ jobSteps: [{ status: "failed", rowsRead: 2, created: 2, failureReason }] }, []);

    expect(run.code).toBe(3);
    expect(run.stdout.toString()).toContain(`failed: ${failureReason}`);
  });

  it("prints a problem document as code: detail and exits 4", async () => {
    const detail = "The header names neither id nor email.";
    const run = await importWith({ refuseImport: { status: 400, code: "invalid_csv", detail } }, []);

    expect(run.code).toBe(4);
    expect(run.stderr).toContain(`audience-service: invalid_csv: ${detail}\n`);
  });
});
