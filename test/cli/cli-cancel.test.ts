import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { cliEnv, useFakeService } from "./fake-service.ts";
import { startCli } from "./run-cli.ts";

const startFake = useFakeService();

it("Ctrl-C cancels the running import job, reports what was applied, and exits 130", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "cli-cancel-")), "members.csv");
  writeFileSync(file, "email\nada@example.com\ngrace@example.com\nlinus@example.com\n");
  // The job stays running at one row until it is cancelled.
  const fake = await startFake({ jobSteps: [{ status: "running", rowsRead: 1, created: 1 }] });
  const cli = startCli(["import", file, "--interval", "0.02"], cliEnv(fake));

  await cli.stderrMatches(/^importing: 1 of ~3 rows/m);
  cli.child.kill("SIGINT");
  const run = await cli.result;

  expect(run.code).toBe(130);
  const jobId = /import (imp_\w+) is queued/.exec(run.stderr)?.[1];
  const cancels = fake.requestsTo("DELETE", "/imports/").map((request) => request.path);
  expect(cancels).toEqual([`/v0/workspaces/${fake.workspaceId}/imports/${jobId}`]);
  expect(run.stderr).toContain("Interrupted: cancelling the import");
  expect(run.stdout.toString()).toMatch(/^Import imp_\w+ was cancelled; the counts say what was applied/);
  expect(run.stdout.toString()).toMatch(/created: +1\n/);
});
