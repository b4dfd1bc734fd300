import { describe, expect } from "vitest";
import { addMembers, createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

describe("an audience's screen", () => {
  it("builds a rule with a count on each condition, shows +N/−M before saving, saves it and explains a member", async ({
    console: c,
    ws,
  }) => {
    const { page } = c;
    await ws.api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
      params: { path: { workspaceId: ws.id, fieldKey: "score" } },
      body: { type: "number" },
    });
    const scores = [10, 40, 55, 70, 90, 120];
    const { results } = await upsertMembers(ws, [
      ...scores.map((score, i) => ({ email: `m${i}@example.com`, fields: { score: String(score) } })),
      { email: "other@elsewhere.org", fields: { score: "99" } },
    ]);
    const customers = await createAudience(ws, "Customers");
    await addMembers(ws, customers, { members: [{ id: results[4]?.id ?? "" }] });
    const id = await createAudience(ws, "High scorers");
    await c.open(`/audiences/${id}`);
    await page.getByRole("heading", { name: "High scorers" }).waitFor();

    await page.getByRole("button", { name: "Add a condition" }).click();
    const first = page.getByRole("group", { name: "Condition 1" });
    await first.getByLabel("Condition 1 field").fill("fields.score");
    await first.getByLabel("Condition 1 operator").selectOption({ label: "is over" });
    await first.getByLabel("Condition 1 value").fill("50");
    // 55, 70, 90, 120 and 99: counted alone, as the whole rule, and as the change saving it makes.
    await expect.poll(() => first.getByLabel("Condition 1 count").textContent()).toBe("5 members");

    await page.getByRole("button", { name: "Add a condition" }).click();
    const second = page.getByRole("group", { name: "Condition 2" });
    await second.getByLabel("Condition 2 field").fill("audience");
    await second.getByLabel("Condition 2 operator").selectOption({ label: "is none of" });
    await second.getByLabel("Condition 2 audience").selectOption({ label: "Customers" });
    await expect.poll(() => second.getByLabel("Condition 2 count").textContent()).toBe("6 members");
    await expect
      .poll(() => page.locator(".diff").last().textContent())
      .toMatch(/\+4 entering, −0 leaving, then 4 members/);
    await c.screenshot("audience-rule");

    // An unfinished condition: said so, and no count or change of an earlier draft is shown as this one's.
    await page.getByRole("button", { name: "Add a condition" }).click();
    await page.getByLabel("Condition 3 value").waitFor();
    await page.getByText("Condition 3 is unfinished: finish it (or remove it) to see the counts").waitFor();
    expect(await page.getByText(/entering/).count()).toBe(0);
    expect(await first.getByLabel("Condition 1 count").textContent()).toBe("…");
    await c.screenshot("audience-rule-unfinished");
    await page.getByRole("button", { name: "Remove condition 3" }).click();
    await expect
      .poll(() => page.locator(".diff").last().textContent())
      .toMatch(/\+4 entering, −0 leaving, then 4 members/);

    await page.getByRole("button", { name: "Save rule" }).click();
    await page.getByText("Saved.", { exact: true }).waitFor();
    await expect.poll(() => page.locator(".diff").first().textContent()).toBe("4 members");

    // A value of the wrong type: the API's message, on the row that caused it.
    await first.getByLabel("Condition 1 value").fill("lots");
    await expect.poll(() => first.getByRole("alert").textContent()).toMatch(/number/);
    await first.getByLabel("Condition 1 value").fill("50");

    await page.getByLabel("Why is a member in (or not)?").fill(results[4]?.id ?? "");
    await page.getByRole("button", { name: "Explain" }).click();
    await page.getByText("Not in the audience.").waitFor();
    await expect
      .poll(() => page.locator(".explanation").textContent())
      .toMatch(/✗ not in audience Customers — is in it/);

    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audience");

    // A snapshot is a manual audience: opening it shows its own (empty) rule, not this draft.
    await page.getByLabel("Name", { exact: true }).fill("High scorers, November");
    await page.getByRole("button", { name: "Take a snapshot" }).click();
    await page.getByRole("link", { name: "High scorers, November" }).click();
    await page.getByRole("heading", { name: "High scorers, November" }).waitFor();
    await page.getByText("No conditions: the audience has members by hand only.").waitFor();
    expect(await page.getByRole("group", { name: "Condition 1" }).count()).toBe(0);
  });

  it("pages the members of an audience and downloads them as CSV", async ({ console: c, ws }) => {
    const id = await createAudience(ws, "Newsletter");
    const members = Array.from({ length: 45 }, (_, i) => ({
      email: `reader${String(i).padStart(2, "0")}@example.com`,
    }));
    await addMembers(ws, id, { members });
    await c.open(`/audiences/${id}`);
    const { page } = c;
    const rows = page.getByRole("table").last().locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(20);
    await page.getByRole("navigation", { name: "Member pages" }).getByRole("button", { name: "Next →" }).click();
    await page.getByText("Page 2").waitFor();
    await page.getByRole("navigation", { name: "Member pages" }).getByRole("button", { name: "Next →" }).click();
    await expect.poll(() => rows.count()).toBe(5);

    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Download CSV" }).click();
    const file = await (await download).path();
    const { readFile } = await import("node:fs/promises");
    const lines = (await readFile(file, "utf8")).trim().split("\n");
    expect(lines).toHaveLength(46);
    expect(lines.slice(1).filter((line) => line.includes("@example.com"))).toHaveLength(45);

    await page.setViewportSize({ width: 390, height: 800 });
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audience-narrow");
  });
});
