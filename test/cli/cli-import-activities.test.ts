import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, type FakeService, useFakeService } from "./fake-service.ts";
import { runCli } from "./run-cli.ts";

const CSV =
  "email,type,occurredAt,id,properties.amount\nada@example.com,order.placed,2026-11-20T09:30:00Z,o1,59.90\n" +
  "grace@example.com,session.attended,,,\n";
const dir = mkdtempSync(join(tmpdir(), "cli-import-activities-"));
const file = join(dir, "activities.csv");
writeFileSync(file, CSV);

const startFake = useFakeService();
let fake: FakeService;

describe("audience-service import --activities", () => {
  it("uploads the file as activities and sums up accepted, duplicate and expired rows", async () => {
    fake = await startFake({
      jobSteps: [{ status: "succeeded", rowsRead: 2, accepted: 1, duplicates: 1, created: 1 }],
    });
    const run = await runCli(["import", file, "--activities", "--interval", "0.02"], cliEnv(fake));

    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toMatch(
      /rows read: +2\n +accepted: +1\n +duplicates: +1\n +expired: +0\n +members created: +1\n +rejected: +0/,
    );
    const [upload] = fake.requestsTo("POST", "/imports");
    expect(upload?.body.toString()).toBe(CSV);
    expect(upload?.query.get("kind")).toBe("activities");
    expect(upload?.query.get("audienceId")).toBeNull();
  });

  it("refuses --audience with --activities: a usage error, nothing uploaded", async () => {
    fake = await startFake({});
    const run = await runCli(["import", file, "--activities", "--audience", "Newsletter"], cliEnv(fake));

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/a file of activities joins no audience/);
    expect(fake.requestsTo("POST", "/imports")).toEqual([]);
  });
});
