import { describe, expect } from "vitest";
import { createAudience } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

describe("an unsaved rule and the browser's Back", () => {
  it("asks before Back loses the rule: no stays with the draft, yes goes back", async ({ console: c, ws }) => {
    const id = await createAudience(ws, "Back test");
    await c.open("/");
    const { page } = c;
    await page.getByRole("link", { name: "Back test" }).click();
    await page.getByRole("heading", { name: "Back test", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Add a condition" }).click();
    await page.getByLabel("Condition 1 value").fill("@example.com");

    const back = async (answer: "accept" | "dismiss") => {
      const asked = page.waitForEvent("dialog");
      await page.evaluate(() => window.history.back());
      const dialog = await asked;
      await dialog[answer]();
    };
    await back("dismiss");
    expect(new URL(page.url()).pathname).toBe(`/console/audiences/${id}`);
    expect(await page.getByLabel("Condition 1 value").inputValue()).toBe("@example.com");

    // Asked again at the next Back: the guard is back in place.
    await back("accept");
    await page.getByRole("heading", { name: "Audiences", level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/?$/);
  });
});
