import { describe, expect } from "vitest";
import { it } from "./console-fixture.ts";

const MINUTE = 60_000;

describe("a member's activities in the console", () => {
  it("shows the timeline newest first, a page at a time", async ({ console: c, ws }) => {
    const start = Date.now() - 60 * MINUTE;
    // 25 activities, a minute apart: the first page holds the newest 20.
    await ws.api.POST("/v0/workspaces/{workspaceId}/activities", {
      params: { path: { workspaceId: ws.id } },
      body: {
        activities: Array.from({ length: 25 }, (_, i) => ({
          id: `a${i}`,
          email: "ada@example.com",
          type: i % 5 === 4 ? "order.placed" : "session.attended",
          occurredAt: new Date(start + i * MINUTE).toISOString(),
          ...(i % 5 === 4 ? { properties: { amount: i * 10, currency: "EUR" } } : {}),
        })),
      },
    });

    await c.open("/members");
    const { page } = c;
    await page.getByRole("button", { name: "ada@example.com" }).click();
    const detail = page.getByRole("region", { name: "ada@example.com" });
    const timeline = detail.getByRole("table", { name: "Activities" });
    const rows = timeline.getByRole("row");
    await expect.poll(() => rows.count()).toBe(21);
    expect(await rows.nth(1).textContent()).toMatch(/order\.placedamount: 240currency: EUR$/);
    expect(await rows.nth(2).textContent()).toMatch(/session\.attended$/);
    await c.screenshot("member-activities");

    await detail.getByRole("button", { name: "Next →" }).click();
    await expect.poll(() => rows.count()).toBe(6);
    expect(await rows.nth(5).textContent()).toMatch(/session\.attended$/);
    await detail.getByRole("button", { name: "← Previous" }).click();
    await expect.poll(() => rows.count()).toBe(21);
    expect(await c.accessibilityViolations()).toEqual([]);
  });

  it("says so when the member has none", async ({ console: c, ws }) => {
    await ws.api.POST("/v0/workspaces/{workspaceId}/members", {
      params: { path: { workspaceId: ws.id } },
      body: { members: [{ email: "grace@example.com" }] },
    });
    await c.open("/members");
    await c.page.getByRole("button", { name: "grace@example.com" }).click();
    await c.page.getByText("No activity recorded.").waitFor();
  });
});
