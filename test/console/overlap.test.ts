import { describe, expect } from "vitest";
import { addMembers, createAudience } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

const people = (...names: string[]) => ({ members: names.map((name) => ({ email: `${name}@example.com` })) });

describe("the Overlap screen", () => {
  it("compares chosen audiences in a heatmap of the members they share", async ({ console: c, ws }) => {
    const readers = await createAudience(ws, "Readers");
    const buyers = await createAudience(ws, "Buyers");
    const trial = await createAudience(ws, "Trial users");
    await createAudience(ws, "Unrelated");
    await addMembers(ws, readers, people("ada", "grace", "lin", "max"));
    await addMembers(ws, buyers, people("lin", "max", "sam"));
    await addMembers(ws, trial, people("max", "kim"));

    await c.open("/overlap");
    const { page } = c;
    const compare = page.getByRole("button", { name: "Compare" });
    await page.getByLabel("Readers").check();
    expect(await compare.isDisabled()).toBe(true);
    await page.getByText("Choose one more.").waitFor();

    // Search narrows the list; what is chosen stays chosen.
    await page.getByLabel("Search").fill("u");
    await page.getByLabel("Readers").waitFor({ state: "detached" });
    await page.getByLabel("Buyers").check();
    await page.getByLabel("Trial users").check();
    await page.getByLabel("Search").fill("");
    expect(await page.getByLabel("Readers").isChecked()).toBe(true);
    expect(await page.getByRole("status").textContent()).toBe("Chosen (3 of at most 20): Readers, Buyers, Trial users");
    await compare.click();

    await page.getByText("In all 3 audiences:").waitFor();
    expect(await page.getByText("In all 3 audiences:").textContent()).toBe("In all 3 audiences: 1");
    const table = page.getByRole("table", { name: "Members in common" });
    expect(await table.getByRole("columnheader").allTextContents()).toEqual(["Readers", "Buyers", "Trial users"]);
    expect(await table.getByRole("rowheader").allTextContents()).toEqual([
      "Readers (4)",
      "Buyers (3)",
      "Trial users (2)",
    ]);
    const row = (name: string) =>
      table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: new RegExp(`^${name} \\(`) }) });
    const cells = (name: string) => row(name).getByRole("cell").allTextContents();
    expect(await cells("Readers")).toEqual(["4 (100%)", "2 (50%)", "1 (25%)"]);
    expect(await cells("Buyers")).toEqual(["2 (67%)", "3 (100%)", "1 (33%)"]);
    expect(await cells("Trial users")).toEqual(["1 (50%)", "1 (50%)", "2 (100%)"]);
    const readersRow = row("Readers").getByRole("cell");
    expect(await readersRow.nth(0).getAttribute("class")).toContain("shade-4");
    expect(await readersRow.nth(2).getAttribute("class")).toContain("shade-2");

    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("overlap");

    // On a phone the heatmap would scroll sideways: the same counts, pair by pair, instead.
    await page.setViewportSize({ width: 390, height: 800 });
    const pairs = page.getByRole("list", { name: "Members in common, by pair" });
    await pairs.waitFor();
    expect(await table.isVisible()).toBe(false);
    expect(await pairs.getByRole("listitem").allTextContents()).toEqual([
      "Readers and Buyers: 2 (50% of Readers, 67% of Buyers)",
      "Readers and Trial users: 1 (25% of Readers, 50% of Trial users)",
      "Buyers and Trial users: 1 (33% of Buyers, 50% of Trial users)",
    ]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("overlap-pairs-narrow");
    await page.getByRole("button", { name: "Clear" }).click();
    expect(await compare.isDisabled()).toBe(true);
    expect(await page.getByRole("status").textContent()).toBe("None chosen.");
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("overlap-narrow");
  });
});
