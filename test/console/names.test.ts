// People named as people: the dry run's samples and the explanation say who by e-mail address,
// with the id after it; "Why is a member in?" takes an address.
import { copyFile, mkdir } from "node:fs/promises";
import { describe, expect } from "vitest";
import { createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

/** Screenshots for the review, beside the run's artefacts. */
const NOTES = process.env.CONSOLE_NOTES_SCREENS;
const keep = async (file: string, name: string) => {
  if (!NOTES) return;
  await mkdir(NOTES, { recursive: true });
  await copyFile(file, `${NOTES}/${name}.png`);
};

describe("members named by e-mail", () => {
  it("names the dry run's samples and the explained member by address, and explains by address", async ({
    console: c,
    ws,
  }) => {
    const { page } = c;
    const { results } = await upsertMembers(ws, [
      { email: "ada@example.com", fields: { plan: "pro" } },
      { email: "grace@example.com", fields: { plan: "pro" } },
      { id: "bare_1", fields: { plan: "pro" } },
      { email: "linus@example.com", fields: { plan: "free" } },
    ]);
    const ada = results[0]?.id ?? "";
    const id = await createAudience(ws, "Pro plan");
    await c.open(`/audiences/${id}`);
    await page.getByRole("heading", { name: "Pro plan" }).waitFor();

    await page.getByRole("button", { name: "Add a condition" }).click();
    const first = page.getByRole("group", { name: "Condition 1" });
    await first.getByLabel("Condition 1 field").fill("fields.plan");
    await first.getByLabel("Condition 1 operator").selectOption({ label: "is" });
    await first.getByLabel("Condition 1 value").fill("pro");
    await expect.poll(() => page.locator(".diff").last().textContent()).toMatch(/\+3 entering/);
    // Each sample by its address, its id after it; a member without an address by its id (the
    // order is the members' numbers, which one request does not fix).
    const entering = page.getByText("Entering, for example:").locator("..");
    await expect
      .poll(async () => (await entering.getByRole("link").allTextContents()).sort())
      .toEqual([`ada@example.com (${ada})`, "bare_1", `grace@example.com (${results[1]?.id})`]);
    expect(await c.accessibilityViolations()).toEqual([]);
    await keep(await c.screenshot("names-dry-run"), "issue48-names-dry-run");

    // Explained by an address: the member it names, titled by its address.
    await page.getByLabel("Why is a member in (or not)?").fill("ADA@example.com");
    await page.getByRole("button", { name: "Explain" }).click();
    await page.getByRole("heading", { name: `Why ada@example.com (${ada})` }).waitFor();
    await page.getByText("Not in the audience.").waitFor();
    expect(new URL(page.url()).searchParams.get("member")).toBe("ADA@example.com");

    // A sample's link explains that member, by its address too.
    await entering.getByRole("link", { name: /grace@example.com/ }).click();
    await page.getByRole("heading", { name: `Why grace@example.com (${results[1]?.id})` }).waitFor();

    // An address nobody has says so, in words.
    await page.getByLabel("Why is a member in (or not)?").fill("nobody@example.com");
    await page.getByRole("button", { name: "Explain" }).click();
    await expect
      .poll(() => page.getByRole("alert").first().textContent())
      .toBe("No member has the e-mail address nobody@example.com.");
    expect(await c.accessibilityViolations()).toEqual([]);
    await keep(await c.screenshot("names-explain-unknown"), "issue48-names-explain-unknown");

    // An id still works, and the title names the member by address.
    await page.getByLabel("Why is a member in (or not)?").fill(ada);
    await page.getByRole("button", { name: "Explain" }).click();
    await page.getByRole("heading", { name: `Why ada@example.com (${ada})` }).waitFor();
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await c.accessibilityViolations()).toEqual([]);
    await keep(await c.screenshot("names-explain-narrow"), "issue48-names-explain-narrow");
    await page.setViewportSize({ width: 1440, height: 900 });
    await keep(await c.screenshot("names-explain"), "issue48-names-explain");
  });
});
