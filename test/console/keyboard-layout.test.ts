import { describe, expect } from "vitest";
import { addMembers, createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

/** What has the focus, as a person would name it: its role's label or its text. */
const focused = (page: import("playwright-core").Page) =>
  page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    return `${element?.tagName.toLowerCase()} ${element?.getAttribute("aria-label") ?? element?.textContent?.trim()}`;
  });

describe("keyboard and layout", () => {
  it("skips to the content, lands on the heading after navigation, and keeps focus in the rule builder", async ({
    console: c,
    ws,
  }) => {
    await ws.api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
      params: { path: { workspaceId: ws.id, fieldKey: "vip" } },
      body: { type: "boolean" },
    });
    await ws.api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
      params: { path: { workspaceId: ws.id, fieldKey: "renewal" } },
      body: { type: "date" },
    });
    const id = await createAudience(ws, "VIPs");
    const { page } = c;
    await page.setViewportSize({ width: 1440, height: 900 });
    await c.open("/");

    // The first Tab reaches the skip link, which moves focus into the content.
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("button Skip to content");
    await page.keyboard.press("Enter");
    expect(await focused(page)).toMatch(/^main /);

    // After a move to another screen, its heading has the focus.
    await page.getByRole("link", { name: "VIPs" }).click();
    await page.getByRole("heading", { name: "VIPs", level: 1 }).waitFor();
    await expect.poll(() => focused(page)).toBe("h1 VIPs");

    // A new condition takes the focus; labels follow the conditions' places as they go.
    await page.getByRole("button", { name: "Add a condition" }).click();
    expect(await focused(page)).toBe("input Condition 1 field");
    await page.keyboard.type("fields.vip", { delay: 0 });
    await page.getByRole("button", { name: "Add a condition" }).click();
    expect(await focused(page)).toBe("input Condition 2 field");
    await page.getByLabel("Condition 2 field").fill("fields.renewal");

    // Typed fields get typed inputs: true/false for a boolean, a date picker for a date.
    const vip = page.getByLabel("Condition 1 value");
    expect(await vip.evaluate((element) => element.tagName)).toBe("SELECT");
    expect(await vip.locator("option").allTextContents()).toEqual(["Choose…", "true", "false"]);
    await page.getByLabel("Condition 2 operator").selectOption({ label: "is after" });
    expect(await page.getByLabel("Condition 2 value").getAttribute("type")).toBe("date");
    await page.getByLabel("Condition 2 value").fill("2026-01-31");
    await page.getByRole("button", { name: "Remove condition 1" }).click();
    expect(await page.getByRole("group", { name: "Condition 2" }).count()).toBe(0);
    expect(await page.getByLabel("Condition 1 value").inputValue()).toBe("2026-01-31");

    // Leaving with unsaved changes asks first; saying no stays.
    page.once("dialog", (dialog) => dialog.dismiss());
    await page.getByRole("link", { name: "Members", exact: true }).click();
    expect(await page.getByRole("heading", { name: "VIPs", level: 1 }).count()).toBe(1);

    // Save keeps the focus where it was.
    await page.getByRole("button", { name: "Save rule" }).focus();
    await page.keyboard.press("Enter");
    await page.getByText("Saved.", { exact: true }).waitFor();
    expect(await focused(page)).toBe("button Save rule");
    // The date the API keeps (midnight UTC) still shows in the date picker as the day typed.
    expect(await page.getByLabel("Condition 1 value").inputValue()).toBe("2026-01-31");
    expect(await page.getByLabel("Condition 1 value").getAttribute("type")).toBe("date");
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("rule-typed-inputs");

    // Saved: leaving asks nothing.
    await page.getByRole("link", { name: "Members", exact: true }).click();
    await page.getByRole("heading", { name: "Members", level: 1 }).waitFor();
    expect(id).toMatch(/^aud_/);
  });

  it("uses the width of a wide screen, and stacks the audience list's rows on a phone with every action", async ({
    console: c,
    ws,
  }) => {
    for (const name of ["Weekly readers", "Customers in the Nordic countries, renewed this year"]) {
      const id = await createAudience(ws, name);
      await addMembers(ws, id, { members: [{ email: `${name.length}@example.com` }] });
    }
    const { page } = c;
    await page.setViewportSize({ width: 1700, height: 900 });
    await c.open("/");
    await page.getByRole("link", { name: "Weekly readers" }).waitFor();
    const mainWidth = () => page.locator("main").evaluate((element) => element.getBoundingClientRect().width);
    expect(await mainWidth()).toBe(1600);

    await page.setViewportSize({ width: 1440, height: 900 });
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audiences-wide");

    await page.setViewportSize({ width: 390, height: 800 });
    // Nothing scrolls sideways, and each row's actions are on screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    for (const name of ["Weekly readers", "Customers in the Nordic countries, renewed this year"]) {
      const archive = page.getByRole("button", { name: `Archive ${name}` });
      const box = await archive.boundingBox();
      expect(box && box.x + box.width).toBeLessThanOrEqual(390);
    }
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audiences-narrow-stacked");
  });

  it("edits a member's typed fields with typed inputs, and checks a new field's key before sending", async ({
    console: c,
    ws,
  }) => {
    for (const [fieldKey, type] of [
      ["vip", "boolean"],
      ["renewal", "date"],
    ] as const) {
      await ws.api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
        params: { path: { workspaceId: ws.id, fieldKey } },
        body: { type },
      });
    }
    await upsertMembers(ws, [{ email: "ada@example.com", fields: { vip: "false", renewal: "2026-03-01" } }]);
    const { page } = c;
    await c.open("/members");
    await page.getByRole("button", { name: "ada@example.com" }).click();
    const detail = page.getByRole("region", { name: "ada@example.com" });
    const vip = detail.getByLabel("vip", { exact: true });
    await vip.waitFor();
    expect(await vip.evaluate((element) => element.tagName)).toBe("SELECT");
    expect(await detail.getByLabel("renewal", { exact: true }).getAttribute("type")).toBe("date");
    await vip.selectOption("true");
    await detail.getByRole("button", { name: "Save vip" }).click();
    await expect
      .poll(async () => {
        const member = await ws.api.GET("/v0/workspaces/{workspaceId}/members", {
          params: { path: { workspaceId: ws.id }, query: { search: "ada" } },
        });
        return member.results[0]?.fields.vip;
      })
      .toBe("true");

    await detail.getByLabel("New field").fill("2nd plan");
    await detail.getByText("A field key starts with a letter").waitFor();
    expect(await detail.getByRole("button", { name: "Add", exact: true }).isDisabled()).toBe(true);
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("member-typed-narrow");
  });
});
