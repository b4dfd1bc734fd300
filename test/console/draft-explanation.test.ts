// A member the dry run samples under "Entering" is in only with the draft rule: its explanation
// must be of that draft, not of the saved rule (issue 48: "The audience has no rule").
import { describe, expect } from "vitest";
import { createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

describe("a dry run's sample explained", () => {
  it("explains a member entering against the draft it came from, and a typed one against the saved rule", async ({
    console: c,
    ws,
  }) => {
    const { page } = c;
    await upsertMembers(ws, [
      { email: "ada@example.com", fields: { plan: "pro" } },
      { email: "linus@example.com", fields: { plan: "free" } },
    ]);
    const id = await createAudience(ws, "Pro plan");
    await c.open(`/audiences/${id}`);
    await page.getByRole("heading", { name: "Pro plan" }).waitFor();
    await page.getByRole("button", { name: "Add a condition" }).click();
    const condition = page.getByRole("group", { name: "Condition 1" });
    await condition.getByLabel("Condition 1 field").fill("plan");
    await condition.getByLabel("Condition 1 operator").selectOption({ label: "is" });
    await condition.getByLabel("Condition 1 value").fill("pro");
    const entering = page.getByText("Entering, for example:").locator("..");
    await entering.getByRole("link", { name: /ada@example\.com/ }).click();

    const panel = page.getByRole("region", { name: /^Why ada@example\.com/ });
    await panel.getByRole("heading", { name: /with the rule not saved yet$/ }).waitFor();
    await panel.getByText("If the rule were saved: In the audience, by its rule.").waitFor();
    expect(await panel.locator(".explanation li").allTextContents()).toEqual([
      "✓ The rule",
      "✓ plan is pro — read: pro",
    ]);
    // The draft is still the builder's, unsaved.
    expect(await condition.getByLabel("Condition 1 value").inputValue()).toBe("pro");
    await page.getByText("Not saved yet.").waitFor();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audience-draft-explanation");
    await page.setViewportSize({ width: 390, height: 800 });
    await panel.getByRole("heading", { name: /with the rule not saved yet$/ }).waitFor();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audience-draft-explanation-narrow");
    await page.setViewportSize({ width: 1440, height: 900 });

    // Asked by hand, a member is explained against the saved rule (none yet).
    await page.getByLabel("Why is a member in (or not)?").fill("ada@example.com");
    await page.getByRole("button", { name: "Explain" }).click();
    await page.getByText("The audience has no rule.").waitFor();
    expect(await page.getByText(/with the rule not saved yet/).count()).toBe(0);
  });
});
