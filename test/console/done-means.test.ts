// Issue 48's "Done means", end to end in the browser and nothing else: import with types chosen on
// the way in, pick plan in the builder, build three audiences, fix a value a refused declaration
// found, add two people by hand and exclude one, merge two audiences, edit and then delete a
// webhook. Each step leaves a screenshot in artifacts/console/done-*.png.
import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { startLiveServer } from "../support/live-server.ts";
import { startAcceptingReceiver } from "./accepting-receiver.ts";
import { it as consoleIt } from "./console-fixture.ts";

/** A server that delivers webhooks to a receiver on this machine, as a marketer's laptop would. */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const it = consoleIt.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({ settings: { webhooks: { allowPrivate: true } } });
  onCleanup(() => server.close());
  return server;
});

const ROWS = 30;
const BAD = 5;
const emailOf = (i: number) => `m${i}@example.com`;
const planOf = (i: number) => (i % 2 === 0 ? "pro" : "free");
const companyOf = (i: number) => (i % 3 === 0 ? "Acme" : "Globex");
const scoreOf = (i: number) => (i === BAD ? "n/a" : String(i * 4));
const FIXED_SCORE = "12";
const indices = Array.from({ length: ROWS }, (_, i) => i);
const members = (n: number) => `${n.toLocaleString()} ${n === 1 ? "member" : "members"}`;

async function createAudience(page: Page, name: string) {
  await page.getByRole("link", { name: "Audiences", exact: true }).click();
  await page.getByLabel("New audience").fill(name);
  await page.getByRole("button", { name: "Create" }).click();
  await page.getByRole("link", { name }).click();
  await page.getByRole("heading", { name, level: 1 }).waitFor();
}

/** One condition as the builder draws it, its own count awaited, then saved. */
async function saveRule(page: Page, field: string, op: string, value: string, count: number) {
  await page.getByRole("button", { name: "Add a condition" }).click();
  const condition = page.getByRole("group", { name: "Condition 1" });
  await condition.getByLabel("Condition 1 field").fill(field);
  await condition.getByLabel("Condition 1 operator").selectOption({ label: op });
  await condition.getByLabel("Condition 1 value").fill(value);
  await expect.poll(() => condition.getByLabel("Condition 1 count").textContent()).toBe(members(count));
  await expect.poll(() => page.locator(".diff").last().textContent()).toMatch(`+${count} entering, −0 leaving`);
  await page.getByRole("button", { name: "Save rule" }).click();
  await page.getByText("Saved.", { exact: true }).waitFor();
}

describe("issue 48, done: a marketer's whole job in the console, without curl", () => {
  it("imports with types, fixes a refused value, builds audiences, adds and excludes by hand, merges, edits and deletes a webhook", async ({
    console: c,
    onTestFinished,
  }) => {
    const hookUrl = await startAcceptingReceiver(onTestFinished);
    const { page } = c;
    await page.setViewportSize({ width: 1440, height: 900 });
    await c.open("");

    // 1. A CSV file, its renewal typed as a date before its rows are applied; score left as text.
    await page.getByRole("link", { name: "Imports" }).click();
    const rows = indices.map(
      (i) => `${emailOf(i)},Name${i},${companyOf(i)},${planOf(i)},${scoreOf(i)},2026-0${1 + (i % 9)}-15`,
    );
    await page.getByLabel("CSV file", { exact: true }).setInputFiles({
      name: "contacts.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(`email,firstName,company,plan,score,renewal\n${rows.join("\n")}\n`),
    });
    const types = page.getByRole("group", { name: "Types of the file's fields" });
    await types.getByLabel("renewal").selectOption("date");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const job = page.getByRole("region", { name: /^Import of contacts\.csv \(imp_/ });
    await job.getByText("succeeded").waitFor({ timeout: 60_000 });
    expect(await job.getByText("rows read").textContent()).toBe(`${ROWS} rows read`);
    await c.screenshot("done-1-import-typed");

    // 2. score as a number is refused: the one member whose value does not parse is named, linked.
    await page.getByRole("link", { name: "Fields" }).click();
    expect(
      await page
        .getByRole("row", { name: /^renewal/ })
        .getByLabel("Type of renewal")
        .inputValue(),
    ).toBe("date");
    const score = page.getByRole("row", { name: /^score/ });
    await score.getByLabel("Type of score").selectOption("number");
    await score.getByRole("button", { name: "Change type of score" }).click();
    const misfits = score.getByRole("listitem");
    await expect
      .poll(() => misfits.allTextContents())
      .toEqual([expect.stringMatching(/^m5@example\.com \(mem_\w+\) holds n\/a/)]);
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("done-2-declaration-refused");

    // 3. Fixed on the member's own page (corrected, not cleared), then the declaration goes through.
    await misfits.first().getByRole("link").click();
    const detail = page.getByRole("region", { name: emailOf(BAD) });
    await detail.getByLabel("score").fill(FIXED_SCORE);
    const saveScore = detail.getByRole("button", { name: "Save score" });
    await saveScore.click();
    await expect.poll(() => saveScore.isDisabled()).toBe(true);
    await c.screenshot("done-3-value-fixed");
    await page.getByRole("link", { name: "Fields" }).click();
    await score.getByLabel("Type of score").selectOption("number");
    await score.getByRole("button", { name: "Change type of score" }).click();
    await expect.poll(() => score.getByRole("alert").count()).toBe(0);
    await page.reload();
    await expect.poll(() => score.getByLabel("Type of score").inputValue()).toBe("number");

    // 4 and 5. Three audiences: plan picked by its name in the builder, then score and company.
    const pro = indices.filter((i) => planOf(i) === "pro");
    const high = indices.filter((i) => Number(i === BAD ? FIXED_SCORE : scoreOf(i)) > 50);
    const acme = indices.filter((i) => companyOf(i) === "Acme");
    await createAudience(page, "Pro plan");
    await saveRule(page, "plan", "is", "pro", pro.length);
    await c.screenshot("done-4-builder-plan");
    await createAudience(page, "High scorers");
    await saveRule(page, "score", "is over", "50", high.length);
    await createAudience(page, "Acme");
    await saveRule(page, "company", "is", "Acme", acme.length);
    await page.getByRole("link", { name: "Audiences", exact: true }).click();
    for (const name of ["Pro plan", "High scorers", "Acme"]) await page.getByRole("link", { name }).waitFor();
    await c.screenshot("done-5-three-audiences");

    // 6. Two people added to Pro plan by hand (one found by search, one new), one rule member excluded.
    await page.getByRole("link", { name: "Pro plan" }).click();
    const table = page.getByRole("table", { name: "Members" });
    await table.getByRole("cell", { name: emailOf(0), exact: true }).waitFor();
    await table.getByRole("button", { name: `Exclude ${emailOf(0)}` }).click();
    await table.getByRole("cell", { name: emailOf(0), exact: true }).waitFor({ state: "detached" });
    const add = page.getByRole("region", { name: "Add people by hand" });
    // Found by part of the address: "Name1" would find Name10…Name19 too, more than the list shows.
    await add.getByLabel("Find or type an e-mail").fill("m1@exa");
    await add.getByRole("button", { name: `Add ${emailOf(1)}` }).click();
    await add.getByText(`${emailOf(1)} added to Pro plan.`).waitFor();
    await add.getByLabel("Find or type an e-mail").fill("newbie@example.com");
    await add.getByRole("button", { name: "Add newbie@example.com" }).click();
    await add.getByText("newbie@example.com added to Pro plan.").waitFor();
    const inPro = new Set([...pro.filter((i) => i !== 0).map(emailOf), emailOf(1), "newbie@example.com"]);
    await expect.poll(() => page.locator(".diff").first().textContent()).toBe(members(inPro.size));
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("done-6-by-hand");

    // 7. Pro plan and Acme merged into a new audience holding the members of both.
    await page.getByRole("link", { name: "← Audiences" }).click();
    await page.getByText("Merge two audiences").click();
    const merge = page.getByRole("form", { name: "Merge two audiences" });
    await merge.getByLabel("Merge", { exact: true }).selectOption({ label: "Pro plan" });
    await merge.getByLabel("with").selectOption({ label: "Acme" });
    await merge.getByLabel("Name of the merged audience").fill("Pro or Acme");
    await merge.getByRole("button", { name: "Merge" }).click();
    await merge.getByRole("link", { name: "Pro or Acme" }).click();
    await page.getByRole("heading", { name: "Pro or Acme", level: 1 }).waitFor();
    const union = new Set([...inPro, ...acme.map(emailOf)]);
    await expect.poll(() => page.locator(".diff").first().textContent()).toBe(members(union.size));
    await c.screenshot("done-7-merged");

    // 8. A webhook created, edited (description and audience filter), then deleted.
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByLabel("Endpoint URL").fill(hookUrl);
    await page.getByRole("button", { name: "Create webhook" }).click();
    const row = page.getByRole("row", { name: new RegExp(hookUrl) });
    await row.getByRole("button", { name: `Edit the webhook to ${hookUrl}` }).click();
    const editor = page.getByRole("region", { name: `Edit the webhook to ${hookUrl}` });
    await editor.getByLabel("Description").fill("CRM sync");
    await editor.getByLabel("Pro or Acme").check();
    await c.screenshot("done-8-webhook-edit");
    await editor.getByRole("button", { name: "Save changes" }).click();
    await editor.waitFor({ state: "detached" });
    await expect.poll(() => row.getByRole("rowheader").textContent()).toBe(`${hookUrl}CRM sync`);
    expect(await row.getByRole("cell").first().textContent()).toBe("all events1 audience only");
    await row.getByRole("button", { name: `Edit the webhook to ${hookUrl}` }).click();
    await editor.getByRole("button", { name: `Delete webhook to ${hookUrl}` }).click();
    await editor.getByRole("button", { name: "Yes, delete it" }).click();
    await page.getByText("No webhooks yet.").waitFor();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("done-9-webhook-deleted");
  });
});
