// An audience's past (issue 49): its members viewed as of a day, and a day of its size history
// opening who entered and who left that day.
import { describe, expect } from "vitest";
import { addMembers, createAudience } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

describe("an audience's history on its screen", () => {
  it("views the members as of a day, and opens who came and went on a day of the size line", async ({
    console: c,
    ws,
  }) => {
    const id = await createAudience(ws, "Trial");
    await addMembers(ws, id, { members: ["ada", "grace", "zoe"].map((name) => ({ email: `${name}@example.com` })) });
    const zoe = (
      await ws.api.GET(`${AUDIENCE}/members`, {
        params: { path: { workspaceId: ws.id, audienceId: id }, query: { search: "zoe" } },
      })
    ).results[0]?.id as string;
    await ws.api.DELETE(`${AUDIENCE}/members`, {
      params: { path: { workspaceId: ws.id, audienceId: id } },
      body: { memberIds: [zoe] },
    });
    await c.open(`/audiences/${id}`);
    const { page } = c;
    const today = new Date().toISOString().slice(0, 10);
    const members = page.getByRole("region", { name: "Members" });
    await expect.poll(() => members.locator("tbody tr").count()).toBe(2);

    // A past view: said so, its count given, nothing offered that would change the audience.
    await page.getByLabel("View the members as of").fill(today);
    const past = page.getByRole("region", { name: /^Members on / });
    await past.getByText("A past view.").waitFor();
    await expect
      .poll(() => past.getByRole("note").textContent())
      .toMatch(/: 2 of them\. Their data are shown as they are now/);
    await expect.poll(() => past.locator("tbody tr").count()).toBe(2);
    expect(await past.getByRole("button", { name: /^Remove/ }).count()).toBe(0);
    expect(await past.getByLabel("Search").count()).toBe(0);

    // Before the workspace began, the service keeps nothing: it says so.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel("View the members as of").fill(yesterday);
    await expect.poll(() => past.getByRole("alert").textContent()).toMatch(/older than the membership record keeps/);
    await page.getByRole("button", { name: "Back to now" }).click();
    await expect.poll(() => members.getByRole("button", { name: /^Remove/ }).count()).toBe(2);

    // Today's bar: Ada and Grace entered; Zoë came and went within the day, so is not listed.
    const day = page.getByRole("group", { name: "Size of Trial, day by day" }).getByRole("button").last();
    await expect.poll(() => day.getAttribute("aria-label")).toMatch(/: 2 members, 3 entered, 1 left$/);
    await day.click();
    const changes = page.getByRole("region", { name: /^Who came and went on / });
    await expect
      .poll(() => changes.getByText(/entered,/).textContent())
      .toMatch(/^2 entered, 0 left \(net, by the end of the day, since the history began at [\d:]+ UTC\)$/);
    await expect
      .poll(() => changes.locator("tbody tr").allTextContents())
      .toEqual([expect.stringMatching(/enteredby hand/), expect.stringMatching(/enteredby hand/)]);

    await page.getByLabel("View the members as of").fill(today);
    await past.getByText("A past view.").waitFor();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audience-history");
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audience-history-narrow");
  });
});
