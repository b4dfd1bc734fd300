import { describe, expect } from "vitest";
import { addMembers, createAudience } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

describe("the Audiences screen", () => {
  it("lists audiences with their exact sizes and kinds, creates, renames, archives and restores", async ({
    console: c,
    ws,
  }) => {
    const readers = await createAudience(ws, "Weekly readers");
    await addMembers(ws, readers, { members: [{ email: "a@example.com" }, { email: "b@example.com" }] });
    await c.open("/");
    const { page } = c;
    const row = page.getByRole("row", { name: /Weekly readers/ });
    await expect.poll(() => row.getByRole("cell").nth(1).textContent()).toBe("2");
    expect(await row.getByRole("cell").nth(2).textContent()).toBe("manual");

    await page.getByLabel("New audience").fill("Churn risk");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("link", { name: "Churn risk" }).waitFor();

    // A name already taken: the API's detail, next to the field.
    await page.getByLabel("New audience").fill("Weekly readers");
    await page.getByRole("button", { name: "Create" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/already/i);

    await row.getByRole("button", { name: "Rename Weekly readers" }).click();
    await page.getByLabel("New name for Weekly readers").fill("Daily readers");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("link", { name: "Daily readers" }).waitFor();

    await page.getByRole("button", { name: "Archive Daily readers" }).click();
    await page.getByRole("link", { name: "Daily readers" }).waitFor({ state: "detached" });
    await page.getByLabel("Show archived").check();
    await page.getByRole("button", { name: "Restore Daily readers" }).click();
    await page.getByRole("button", { name: "Archive Daily readers" }).waitFor();

    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audiences");
  });

  it("finds audiences by name", async ({ console: c, ws }) => {
    await createAudience(ws, "Trial users");
    await createAudience(ws, "Paying customers");
    await c.open("/");
    await c.page.getByLabel("Search").fill("trial");
    await c.page.getByRole("link", { name: "Paying customers" }).waitFor({ state: "detached" });
    // The list may be empty for a moment while the search's page loads: wait for its answer.
    await c.page.getByRole("link", { name: "Trial users" }).waitFor();
    expect(await c.page.getByRole("link", { name: "Trial users" }).count()).toBe(1);
  });
});
