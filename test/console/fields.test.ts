import { describe, expect } from "vitest";
import { createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

describe("the Fields screen", () => {
  it("declares field types, changes and deletes them, and shows why the API refuses", async ({ console: c, ws }) => {
    await upsertMembers(ws, [
      { email: "ada@example.com", fields: { score: "42", plan: "pro" } },
      { email: "grace@example.com", fields: { score: "7", plan: "free" } },
    ]);
    await c.open("/fields");
    const { page } = c;
    await page.getByText("No declared fields: every field is text.").waitFor();

    await page.getByLabel("Field key").fill("score");
    await page.getByLabel("Type", { exact: true }).selectOption("number");
    await page.getByRole("button", { name: "Declare" }).click();
    const score = page.getByRole("row", { name: /^score/ });
    await score.waitFor();
    expect(await score.getByLabel("Type of score").inputValue()).toBe("number");
    expect(await page.getByLabel("Field key").inputValue()).toBe("");

    await page.getByLabel("Field key").fill("lastOrder");
    await page.getByLabel("Type", { exact: true }).selectOption("date");
    await page.getByRole("button", { name: "Declare" }).click();
    await page.getByRole("row", { name: /^lastOrder/ }).waitFor();

    // Values that do not parse: the API's detail next to the form that asked.
    await page.getByLabel("Field key").fill("plan");
    await page.getByLabel("Type", { exact: true }).selectOption("boolean");
    await page.getByRole("button", { name: "Declare" }).click();
    const form = page.getByRole("form", { name: "Declare a field" });
    await expect
      .poll(() => form.getByRole("alert").textContent())
      .toBe("2 members hold values of plan that do not parse as a boolean; correct or clear them first.");

    // … and next to the row whose type was to change.
    await score.getByLabel("Type of score").selectOption("date");
    await score.getByRole("button", { name: "Change type of score" }).click();
    await expect
      .poll(() => score.getByRole("alert").textContent())
      .toBe("2 members hold values of score that do not parse as a date; correct or clear them first.");

    // A field a rule reads cannot be deleted: the rule's audience is named next to the row.
    const topScorers = await createAudience(ws, "Top scorers");
    await ws.api.PUT("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
      params: { path: { workspaceId: ws.id, audienceId: topScorers } },
      body: { filter: { field: "fields.score", op: "gt", value: "10" } },
    });
    await score.getByRole("button", { name: "Delete score" }).click();
    await expect
      .poll(() => score.getByRole("alert").textContent())
      .toBe(`The rule of audience ${topScorers} uses fields.score; change the rule first.`);

    await page.getByRole("button", { name: "Delete lastOrder" }).click();
    await page.getByRole("row", { name: /^lastOrder/ }).waitFor({ state: "detached" });
    expect(await page.getByRole("table").getByRole("rowheader").allTextContents()).toEqual(["score"]);

    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("fields");

    await page.setViewportSize({ width: 390, height: 800 });
    await score.getByRole("button", { name: "Delete score" }).waitFor();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("fields-narrow");
  });
});
