import { describe, expect } from "vitest";
import { addMembers, createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

describe("the Members screen", () => {
  it("opens a member, sets and removes fields, and shows its audiences with why it is in", async ({
    console: c,
    ws,
  }) => {
    const readers = await createAudience(ws, "Weekly readers");
    await addMembers(ws, readers, {
      members: [{ email: "ada@example.com", fields: { firstName: "Ada", company: "Acme", plan: "pro" } }],
    });
    const acme = await createAudience(ws, "Acme people");
    await ws.api.PUT("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
      params: { path: { workspaceId: ws.id, audienceId: acme } },
      body: { filter: { field: "fields.company", op: "eq", value: "Acme" } },
    });
    await upsertMembers(ws, [{ email: "grace@example.com", fields: { firstName: "Grace", company: "Navy" } }]);

    await c.open("/members");
    const { page } = c;
    await page.getByText("2 members").waitFor();
    await page.getByRole("button", { name: "ada@example.com" }).click();
    const detail = page.getByRole("region", { name: "ada@example.com" });
    expect(await detail.getByLabel("firstName").inputValue()).toBe("Ada");
    expect(await detail.getByLabel("plan").inputValue()).toBe("pro");
    const memberships = detail.getByRole("listitem");
    // Each with how it is in, and how to take it out by hand.
    await expect
      .poll(() => memberships.allTextContents())
      .toEqual([
        "Acme people by rule Exclude from Acme people",
        "Weekly readers added by hand Remove from Weekly readers",
      ]);

    // A field set: the rule-based audience follows (the member leaves "Acme people").
    await detail.getByLabel("company").fill("Initech");
    await detail.getByRole("button", { name: "Save company" }).click();
    await expect
      .poll(() => memberships.allTextContents())
      .toEqual(["Weekly readers added by hand Remove from Weekly readers"]);
    expect(await page.getByRole("row", { name: /ada@example.com/ }).textContent()).toContain("Initech");

    // A new field, then one removed with null.
    await detail.getByLabel("New field").fill("score");
    await detail.getByLabel("Value").fill("42");
    await detail.getByRole("button", { name: "Add", exact: true }).click();
    await expect.poll(() => detail.getByLabel("score").inputValue()).toBe("42");
    await detail.getByRole("button", { name: "Remove plan" }).click();
    await detail.getByLabel("plan").waitFor({ state: "detached" });
    const stored = await ws.api.GET("/v0/workspaces/{workspaceId}/members", {
      params: { path: { workspaceId: ws.id }, query: { search: "ada" } },
    });
    expect(stored.results[0]?.fields).toEqual({
      firstName: "Ada",
      lastName: "",
      role: "",
      company: "Initech",
      score: "42",
    });

    // A value the API refuses: its detail, next to the field.
    await ws.api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
      params: { path: { workspaceId: ws.id, fieldKey: "score" } },
      body: { type: "number" },
    });
    await detail.getByLabel("score").fill("many");
    await detail.getByRole("button", { name: "Save score" }).click();
    await expect
      .poll(() => detail.getByRole("alert").textContent())
      .toBe("A field value does not parse as its field's declared type.");
    expect(await detail.getByRole("listitem").filter({ hasText: "/body/fields/score" }).textContent()).toMatch(
      /number/,
    );

    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("members");
  });

  it("searches and pages through members without loading them all", async ({ console: c, ws }) => {
    await upsertMembers(
      ws,
      Array.from({ length: 30 }, (_, i) => ({ email: `reader${String(i).padStart(2, "0")}@example.com` })),
    );
    await upsertMembers(ws, [{ email: "lin@example.com", fields: { firstName: "Lin", role: "Editor" } }]);
    await c.page.setViewportSize({ width: 390, height: 800 });
    await c.open("/members");
    const { page } = c;
    await page.getByText("31 members").waitFor();
    const rows = page.getByRole("table").getByRole("row");
    await expect.poll(() => rows.count()).toBe(26); // the header and a page of 25
    await page.getByRole("button", { name: "Next →" }).click();
    await page.getByText("Page 2").waitFor();
    await expect.poll(() => rows.count()).toBe(7);
    await page.getByRole("button", { name: "← Previous" }).click();
    await expect.poll(() => rows.count()).toBe(26);

    await page.getByLabel("Search").fill("editor");
    await page.getByText("1 member match").waitFor();
    expect(await page.getByRole("button", { name: "lin@example.com" }).count()).toBe(1);
    await page.getByRole("button", { name: "lin@example.com" }).click();
    await page.getByRole("region", { name: "lin@example.com" }).getByText("In no audience.").waitFor();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("members-narrow");
  });
});
