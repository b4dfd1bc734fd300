import { describe, expect } from "vitest";
import { createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

describe("a condition on a field nobody holds", () => {
  it("says so beside the condition, and the warning goes once the key is right", async ({ console: c, ws }) => {
    const { page } = c;
    await upsertMembers(ws, [
      { email: "ada@example.com", fields: { plan: "pro" } },
      { email: "grace@example.com", fields: { plan: "free" } },
    ]);
    const id = await createAudience(ws, "Pro plan");
    await c.open(`/audiences/${id}`);
    await page.getByRole("heading", { name: "Pro plan" }).waitFor();
    await page.getByRole("button", { name: "Add a condition" }).click();
    const condition = page.getByRole("group", { name: "Condition 1" });
    await condition.getByLabel("Condition 1 field").fill("plna");
    await condition.getByLabel("Condition 1 operator").selectOption({ label: "is" });
    await condition.getByLabel("Condition 1 value").fill("pro");
    const warning = condition.getByText("No member has a field named plna.");
    await warning.waitFor();
    expect(await condition.getByLabel("Condition 1 field").getAttribute("aria-describedby")).toBe(
      await warning.getAttribute("id"),
    );
    expect(await condition.getByLabel("Condition 1 count").textContent()).toBe("0 members");
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audience-rule-unknown-field");
    await page.setViewportSize({ width: 390, height: 800 });
    await warning.waitFor();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audience-rule-unknown-field-narrow");
    await page.setViewportSize({ width: 1440, height: 900 });

    await condition.getByLabel("Condition 1 field").fill("plan");
    await expect.poll(() => condition.getByLabel("Condition 1 count").textContent()).toBe("1 member");
    expect(await condition.getByText(/No member has a field/).count()).toBe(0);
  });
});
