import { describe, expect } from "vitest";
import { startLiveServer } from "../support/live-server.ts";
import { startAcceptingReceiver } from "./accepting-receiver.ts";
import { it as consoleIt } from "./console-fixture.ts";

/** A server that delivers webhooks to a receiver on this machine, as a newcomer's would on a laptop. */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const it = consoleIt.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({ settings: { webhooks: { allowPrivate: true } } });
  onCleanup(() => server.close());
  return server;
});

const MEMBERS = 3_000;
const scoreOf = (i: number) => i % 100;
const companyOf = (i: number) => (i % 3 === 0 ? "Acme" : "Globex");

describe("a new user's first session in the console", () => {
  it("imports members, types a field, builds a rule with counts and a dry run, explains, compares, subscribes and watches", async ({
    console: c,
    onTestFinished,
  }) => {
    const hookUrl = await startAcceptingReceiver(onTestFinished);
    const { page } = c;

    // The banner's link signs in.
    await c.open("");
    await page.getByRole("heading", { name: "Audiences" }).waitFor();
    await page.getByLabel("New audience").fill("March import");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("link", { name: "March import" }).waitFor();

    // A number field, then a CSV of a few thousand members with a progress bar.
    await page.getByRole("link", { name: "Fields" }).click();
    await page.getByLabel("Field key").fill("score");
    await page.getByLabel("Type", { exact: true }).selectOption("number");
    await page.getByRole("button", { name: "Declare" }).click();
    await page.getByRole("row", { name: /^score/ }).waitFor();

    await page.getByRole("link", { name: "Imports" }).click();
    const rows = Array.from({ length: MEMBERS }, (_, i) => `member${i}@example.com,${scoreOf(i)},${companyOf(i)}`);
    await page.getByLabel("CSV file", { exact: true }).setInputFiles({
      name: "march.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(`email,score,company\n${rows.join("\n")}\n`),
    });
    await page.getByLabel("Add everyone to").selectOption("March import");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const job = page.getByRole("region", { name: /^Import of march\.csv \(imp_/ });
    await job.getByText("succeeded").waitFor({ timeout: 60_000 });
    const progress = job.getByRole("progressbar", { name: "Import progress" });
    expect(await progress.getAttribute("value")).toBe(String(MEMBERS));
    await c.screenshot("journey-import");

    // A rule, with a count on each condition and the change it makes before it is saved.
    await page.getByRole("link", { name: "Audiences" }).click();
    await page.getByLabel("New audience").fill("Engaged at Acme");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("link", { name: "Engaged at Acme" }).click();
    await page.getByRole("heading", { name: "Engaged at Acme" }).waitFor();
    await page.getByRole("button", { name: "Add a condition" }).click();
    await page.getByLabel("Condition 1 field").fill("fields.score");
    await page.getByLabel("Condition 1 operator").selectOption({ label: "is over" });
    await page.getByLabel("Condition 1 value").fill("50");
    await page.getByRole("button", { name: "Add a condition" }).click();
    await page.getByLabel("Condition 2 field").fill("fields.company");
    await page.getByLabel("Condition 2 value").fill("Acme");
    await page.getByLabel("Condition 2 operator").selectOption({ label: "is" });
    const indices = Array.from({ length: MEMBERS }, (_, i) => i);
    const engaged = indices.filter((i) => scoreOf(i) > 50).length;
    const atAcme = indices.filter((i) => companyOf(i) === "Acme").length;
    const both = indices.filter((i) => scoreOf(i) > 50 && companyOf(i) === "Acme").length;
    await expect
      .poll(() => page.getByLabel("Condition 1 count").textContent())
      .toBe(`${engaged.toLocaleString()} members`);
    await expect
      .poll(() => page.getByLabel("Condition 2 count").textContent())
      .toBe(`${atAcme.toLocaleString()} members`);
    await expect
      .poll(() => page.locator(".diff").last().textContent())
      .toMatch(new RegExp(`\\+${both.toLocaleString()} entering, −0 leaving`));
    await c.screenshot("journey-rule");
    await page.getByRole("button", { name: "Save rule" }).click();
    await page.getByText("Saved.", { exact: true }).waitFor();
    await expect.poll(() => page.locator(".diff").first().textContent()).toBe(`${both.toLocaleString()} members`);

    // Why the first member listed is in.
    await page
      .getByRole("button", { name: /^Why\?/ })
      .first()
      .click();
    await page.getByText("In the audience, by its rule.").waitFor();
    await expect
      .poll(() => page.locator(".explanation li").allTextContents())
      .toEqual([
        "✓ The rule",
        expect.stringMatching(/^✓ score is over 50 — read: \d+$/),
        "✓ company is Acme — read: Acme",
      ]);
    await c.screenshot("journey-explanation");

    // The two audiences side by side.
    await page.getByRole("link", { name: "Overlap" }).click();
    await page.getByLabel("March import").check();
    await page.getByLabel("Engaged at Acme").check();
    await page.getByRole("button", { name: "Compare" }).click();
    const table = page.getByRole("table", { name: "Members in common" });
    await table.waitFor();
    expect(await table.getByRole("rowheader").allTextContents()).toEqual([
      `March import (${MEMBERS.toLocaleString()})`,
      `Engaged at Acme (${both.toLocaleString()})`,
    ]);
    await c.screenshot("journey-overlap");

    // A webhook, and its test delivery in the log.
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByLabel("Endpoint URL").fill(hookUrl);
    await page.getByRole("button", { name: "Create webhook" }).click();
    await page.getByRole("region", { name: `Signing secret for ${hookUrl}` }).waitFor();
    await page.getByRole("button", { name: `Send test to ${hookUrl}` }).click();
    const delivery = page
      .getByRole("table", { name: `Deliveries to ${hookUrl}` })
      .getByRole("row")
      .nth(1);
    await expect.poll(() => delivery.getByRole("cell").nth(2).textContent(), { timeout: 20_000 }).toBe("succeeded");
    await c.screenshot("journey-webhooks");

    // The events tail moves while another tab works.
    await page.getByRole("link", { name: "Events" }).click();
    await page.getByRole("status").filter({ hasText: "following since" }).waitFor();
    const other = await page.context().newPage();
    await other.goto(page.url().replace(/\/events.*$/, `/#key=${c.key}`));
    await other.getByLabel("New audience").fill("Spring launch");
    await other.getByRole("button", { name: "Create" }).click();
    const events = page.getByRole("table", { name: "Events, newest first" }).getByRole("row");
    // The journey's own history is listed already; the new audience arrives on top of it.
    await expect.poll(() => events.nth(1).getByRole("cell").nth(2).textContent()).toBe("Spring launch");
    expect(await events.nth(1).getByRole("cell").nth(1).textContent()).toBe("audience.created");
    await other.close();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("journey-events");
  });
});
