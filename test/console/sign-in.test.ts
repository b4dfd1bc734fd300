import { describe, expect } from "vitest";
import { createAudience } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

describe("signing in to the console", () => {
  it("signs in from the banner's link, takes the key out of the address, and signs out", async ({ console: c, ws }) => {
    await createAudience(ws, "Readers");
    // The link exactly as the banner prints it: /console#key=… (redirected to /console/, fragment kept).
    await c.open("");
    const { page } = c;
    await page.getByRole("link", { name: "Readers" }).waitFor();
    expect(new URL(page.url()).hash).toBe("");
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([ws.key]);

    // A reload of the tab stays signed in; so does a new tab of the same browser session, which
    // asks the signed-in tab for its key; another browser session (a new context) does not.
    await page.reload();
    await page.getByRole("link", { name: "Readers" }).waitFor();
    const sibling = await page.context().newPage();
    await sibling.goto(page.url().replace(/#.*$/, ""));
    await sibling.getByRole("link", { name: "Readers" }).waitFor();
    expect(await sibling.evaluate(() => Object.values(sessionStorage))).toEqual([ws.key]);
    const other = await page.context().browser()?.newPage();
    await other?.goto(page.url());
    await other?.getByLabel("Workspace API key").waitFor();
    await other?.close();

    // Signing out signs every tab of the session out.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Workspace API key").waitFor();
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([]);
    await sibling.getByLabel("Workspace API key").waitFor();
    expect(await sibling.evaluate(() => Object.values(sessionStorage))).toEqual([]);
    await sibling.close();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("sign-in");
  });

  it("signs in by keyboard with a pasted key, and says what is wrong with a bad one", async ({
    console: c,
    ws,
    server,
  }) => {
    const { page } = c;
    await page.goto(`${server.baseUrl}/console/`);
    // The page has loaded before React has drawn the form: keys pressed earlier go nowhere.
    await page.getByLabel("Workspace API key").waitFor();
    await page.keyboard.press("Tab");
    await page.keyboard.type("not a key");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/not an API key/);
    // A key of the right shape that the server does not know: the API's own answer.
    await page.getByLabel("Workspace API key").fill(`${ws.key.slice(0, -4)}XXXX`);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("alert").first().textContent()).toMatch(/key/i);
    await page.getByRole("button", { name: "Sign out" }).click();

    await page.getByLabel("Workspace API key").fill(ws.key);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Audiences" }).waitFor();
    // The sections are reachable by keyboard.
    await page.getByRole("link", { name: "Fields" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Fields" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/console/fields");
  });
});
