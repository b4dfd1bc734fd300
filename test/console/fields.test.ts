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
    // Every field the members hold is listed, typed or not, with how many hold it and its values.
    const plan = page.getByRole("row", { name: /^plan/ });
    expect(await plan.getByLabel("Type of plan").inputValue()).toBe("string");
    expect((await plan.getByRole("cell").allTextContents()).slice(1)).toEqual(["2", "free, pro", "—", ""]);

    await page.getByLabel("Field key").fill("score");
    await page.getByLabel("Type", { exact: true }).selectOption("number");
    await page.getByRole("button", { name: "Declare" }).click();
    // score is listed before it is declared (members hold it), so the row is there at once: wait for its type.
    const score = page.getByRole("row", { name: /^score/ });
    await expect.poll(() => score.getByLabel("Type of score").inputValue()).toBe("number");
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

    // A field a rule reads cannot be deleted: the rule's audience is named, by its name, next to the row.
    const topScorers = await createAudience(ws, "Top scorers");
    await ws.api.PUT("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
      params: { path: { workspaceId: ws.id, audienceId: topScorers } },
      body: { filter: { field: "fields.score", op: "gt", value: "10" } },
    });
    await score.getByRole("button", { name: "Delete score" }).click();
    await expect
      .poll(() => score.getByRole("alert").textContent())
      .toBe(`The rule of audience "Top scorers" (${topScorers}) uses fields.score; change the rule first.`);

    await page.getByRole("button", { name: "Delete lastOrder" }).click();
    await page.getByRole("row", { name: /^lastOrder/ }).waitFor({ state: "detached" });
    expect(await page.getByRole("table").getByRole("rowheader").allTextContents()).toEqual([
      "company",
      "firstName",
      "lastName",
      "plan",
      "role",
      "score",
    ]);

    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("fields");

    await page.setViewportSize({ width: 390, height: 800 });
    await score.getByRole("button", { name: "Delete score" }).waitFor();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("fields-narrow");
  });

  it("names the members a declaration is refused for, links them, and clears their values", async ({
    console: c,
    ws,
  }) => {
    await upsertMembers(ws, [
      { email: "ada@example.com", fields: { score: "42" } },
      // Ids of their own: members written together are listed by id, and a random one could sort
      // either side of mem_noaddress.
      { id: "mem_grace", email: "grace@example.com", fields: { score: "n/a" } },
      { id: "mem_noaddress", fields: { score: "soon" } },
    ]);
    await c.open("/fields");
    const { page } = c;
    const score = page.getByRole("row", { name: /^score/ });
    await score.getByLabel("Type of score").selectOption("number");
    await score.getByRole("button", { name: "Change type of score" }).click();
    const misfits = score.getByRole("listitem");
    await expect.poll(() => misfits.count()).toBe(2);
    expect(await misfits.allTextContents()).toEqual([
      "grace@example.com (mem_grace) holds n/a Clear the score of grace@example.com",
      "mem_noaddress holds soon Clear the score of mem_noaddress",
    ]);
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("fields-refused");

    await score.getByRole("button", { name: "Clear the score of mem_noaddress" }).click();
    await misfits.nth(1).getByText("cleared").waitFor();
    // The member's own page, to correct a value rather than clear it.
    await misfits.first().getByRole("link").click();
    await page.getByRole("heading", { name: "Members" }).waitFor();
    await page.getByRole("heading", { name: /grace@example\.com/ }).waitFor();
  });
});
