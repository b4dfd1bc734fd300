import { describe, expect } from "vitest";
import { allMemberIds, createAudience, upsertMembers } from "../support/factories.ts";
import { startLiveServer } from "../support/live-server.ts";
import { it } from "./console-fixture.ts";

const csvFile = (text: string) => ({ name: "members.csv", mimeType: "text/csv", buffer: Buffer.from(text) });

describe("the Imports screen", () => {
  it("uploads a CSV file into an audience, follows its job to the end and lists the rejected rows by line", async ({
    console: c,
    ws,
  }) => {
    const newsletter = await createAudience(ws, "Newsletter");
    const rows = Array.from({ length: 120 }, (_, i) => `reader${i}@example.com,Reader ${i},Acme`);
    rows.splice(40, 0, "not-an-email,Broken,Acme");
    rows.splice(90, 0, "extra@example.com,Too,Many,Cells");
    await c.open("/imports");
    const { page } = c;
    await page.getByText("No imports yet.").waitFor();
    await page
      .getByLabel("CSV file", { exact: true })
      .setInputFiles(csvFile(`email,firstName,company\n${rows.join("\n")}\n`));
    await page.getByLabel("Add everyone to").selectOption("Newsletter");
    await page.getByRole("button", { name: "Import", exact: true }).click();

    const job = page.getByRole("region", { name: /^Import of members\.csv \(imp_/ });
    await job.getByText("succeeded").waitFor();
    const progress = job.getByRole("progressbar", { name: "Import progress" });
    expect(await progress.getAttribute("value")).toBe("122");
    expect(await progress.getAttribute("max")).toBe("122");
    expect(await job.getByText("rows read").textContent()).toBe("122 rows read");
    const count = (label: string) => job.getByRole("definition").and(job.locator(`dt:text-is("${label}") + dd`));
    expect(await count("Created").textContent()).toBe("120");
    expect(await count("Rejected").textContent()).toBe("2");
    const errors = job.getByRole("table", { name: "Rejected rows" }).getByRole("row");
    expect(await errors.nth(1).getByRole("cell").allTextContents()).toEqual(["42", expect.stringMatching(/e-mail/)]);
    expect(await errors.nth(2).getByRole("cell").allTextContents()).toEqual(["92", expect.stringMatching(/column/)]);
    expect(await job.getByRole("button", { name: "Cancel import" }).count()).toBe(0);
    expect(await allMemberIds(ws, newsletter)).toHaveLength(120);

    const past = page.getByRole("table", { name: "Recent imports" }).getByRole("row").nth(1);
    await expect
      .poll(() => past.getByRole("cell").allTextContents())
      .toEqual([
        "members.csv",
        expect.any(String),
        "succeeded",
        "122",
        "120",
        "0",
        "2",
        expect.stringMatching(/^Details of members\.csv, started /),
      ]);

    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("imports");
  });

  it("shows the API's detail when a file is refused", async ({ console: c }) => {
    await c.page.setViewportSize({ width: 390, height: 800 });
    await c.open("/imports");
    await c.page.getByLabel("CSV file", { exact: true }).setInputFiles(csvFile("firstName,company\nAda,Acme\n"));
    await c.page.getByRole("button", { name: "Import", exact: true }).click();
    const form = c.page.getByRole("form", { name: "Upload a CSV file" });
    await expect.poll(() => form.getByRole("alert").textContent()).toMatch(/id.*email|email.*id/);
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("imports-refused-narrow");
  });
});

describe("typing fields at import", () => {
  it("declares the types chosen for the file's fields before its rows, and names who blocks one", async ({
    console: c,
    ws,
  }) => {
    await upsertMembers(ws, [{ email: "old@example.com", fields: { renewal: "next spring" } }]);
    await c.open("/imports");
    const { page } = c;
    const form = page.getByRole("form", { name: "Upload a CSV file" });
    await page
      .getByLabel("CSV file", { exact: true })
      .setInputFiles(csvFile('\uFEFFemail,firstName,plan,"score",renewal\nada@example.com,Ada,pro,42,2026-01-31\n'));
    const types = form.getByRole("group", { name: "Types of the file's fields" });
    await types.getByLabel("score").waitFor();
    expect(await types.getByRole("combobox").count()).toBe(3);
    await types.getByLabel("score").selectOption("number");
    await types.getByLabel("renewal").selectOption("date");
    await page.getByRole("button", { name: "Import", exact: true }).click();

    // renewal is refused: who holds what, and nothing imported.
    await expect.poll(() => form.getByRole("alert").textContent()).toMatch(/^1 member holds a value of renewal/);
    expect(await form.getByRole("listitem").textContent()).toMatch(
      /^old@example\.com \(mem_\w+\) holds next spring Clear/,
    );
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("imports-typing-refused");
    await form.getByRole("button", { name: /^Clear the renewal of old@example\.com/ }).click();
    await form.getByText("cleared").waitFor();

    await page.getByRole("button", { name: "Import", exact: true }).click();
    const job = page.getByRole("region", { name: /^Import of members\.csv \(imp_/ });
    await job.getByText("succeeded").waitFor();
    const { results } = await ws.api.GET("/v0/workspaces/{workspaceId}/fields", {
      params: { path: { workspaceId: ws.id } },
    });
    const typeOf = Object.fromEntries(results.map((field) => [field.key, field.type]));
    expect([typeOf.plan, typeOf.score, typeOf.renewal]).toEqual(["string", "number", "date"]);
    await c.screenshot("imports-typed");
  });
});

/** A server whose import workers are off: a job stays queued until it is cancelled. */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const idleIt = it.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({ workers: false });
  onCleanup(() => server.close());
  return server;
});

describe("cancelling an import", () => {
  idleIt("cancels a job that has not ended, from its panel", async ({ console: c }) => {
    await c.open("/imports");
    const { page } = c;
    await page
      .getByLabel("CSV file", { exact: true })
      .setInputFiles(csvFile("email\nada@example.com\ngrace@example.com\n"));
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const job = page.getByRole("region", { name: /^Import of members\.csv \(imp_/ });
    await job.getByText("queued").waitFor();
    expect(await job.getByText("rows read").textContent()).toBe("0 of about 2 rows read");
    await job.getByRole("button", { name: "Cancel import" }).click();
    await job.getByText("cancelled").waitFor();
    await job.getByRole("button", { name: "Cancel import" }).waitFor({ state: "detached" });
    const progress = job.getByRole("progressbar", { name: "Import progress" });
    expect([await progress.getAttribute("value"), await progress.getAttribute("max")]).toEqual(["0", "2"]);
    const past = page.getByRole("table", { name: "Recent imports" }).getByRole("row").nth(1);
    await expect.poll(() => past.getByRole("cell").nth(2).textContent()).toBe("cancelled");
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("imports-cancelled");
  });
});
