import { expect } from "vitest";
import { createAudience, ingestActivities as ingest } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

it("builds a rule of what members did, with live counts, and saves it as the API keeps it", async ({
  console: c,
  ws,
}) => {
  // ada attended twice and never ordered; bob attended twice and ordered; cy attended once.
  await ingest(ws, [
    { memberId: "ada", type: "session.attended", occurredAt: ago(3) },
    { memberId: "ada", type: "session.attended", occurredAt: ago(40) },
    { memberId: "bob", type: "session.attended", occurredAt: ago(5) },
    { memberId: "bob", type: "session.attended", occurredAt: ago(6) },
    { memberId: "bob", type: "order.placed", occurredAt: ago(2) },
    { memberId: "cy", type: "session.attended", occurredAt: ago(1) },
  ]);
  const id = await createAudience(ws, "Engaged, not buying");
  await c.open(`/audiences/${id}`);
  const { page } = c;
  await page.getByRole("heading", { name: "Engaged, not buying" }).waitFor();

  await page.getByRole("button", { name: "Add an activity condition" }).click();
  const first = page.getByRole("group", { name: "Condition 1" });
  await first.getByLabel("Condition 1 activity").fill("session.attended");
  await first.getByLabel("Condition 1 times").fill("2");
  await first.getByLabel("Condition 1 amount").fill("90");
  await expect.poll(() => first.getByLabel("Condition 1 count").textContent()).toBe("2 members");

  await page.getByRole("button", { name: "Add an activity condition" }).click();
  const second = page.getByRole("group", { name: "Condition 2" });
  await second.getByLabel("Condition 2 did or did not").selectOption({ label: "did not do" });
  await second.getByLabel("Condition 2 activity").fill("order.placed");
  await expect.poll(() => second.getByLabel("Condition 2 count").textContent()).toBe("2 members");
  await expect
    .poll(() => page.locator(".diff").last().textContent())
    .toMatch(/\+1 entering, −0 leaving, then 1 member/);
  expect(await c.accessibilityViolations()).toEqual([]);
  await c.screenshot("activity-rule");

  await page.getByRole("button", { name: "Save rule" }).click();
  await page.getByText("Saved.", { exact: true }).waitFor();
  const saved = await ws.api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
    params: { path: { workspaceId: ws.id, audienceId: id } },
  });
  expect(saved).toEqual({
    memberCount: 1,
    filter: {
      all: [
        { activity: "session.attended", count: { op: "gte", value: 2 }, withinLast: "P90D" },
        { not: { activity: "order.placed", count: { op: "gte", value: 1 }, withinLast: "P30D" } },
      ],
    },
  });
  // The saved rule is drawn again as the same two rows, not as JSON.
  await c.open(`/audiences/${id}`);
  await expect.poll(() => page.getByLabel("Condition 2 activity").inputValue()).toBe("order.placed");

  // Why ada is in: how often she attended, and that she never ordered.
  await page.getByLabel("Why is a member in (or not)?").fill("ada");
  await page.getByRole("button", { name: "Explain" }).click();
  await expect.poll(() => page.locator(".explanation").textContent()).toMatch(/2 times, last on/);
});
