import { describe, expect } from "vitest";
import { addMembers, createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

describe("the Events screen", () => {
  it("opens with the recent history, then follows the feed, newest first, without a reload", async ({
    console: c,
    ws,
  }) => {
    await createAudience(ws, "Before the screen opened");
    await c.open("/events");
    const { page } = c;
    await page.getByRole("status").filter({ hasText: "Recent history, following since" }).waitFor();
    const rows = page.getByRole("table", { name: "Events, newest first" }).getByRole("row");
    // What happened before the screen opened is there at once.
    await expect
      .poll(() => rows.nth(1).getByRole("cell").allTextContents())
      .toEqual([
        expect.any(String),
        "audience.created",
        "Before the screen opened",
        "created “Before the screen opened”",
      ]);

    // Changes made elsewhere (here through the API) appear while the screen is open.
    const launch = await createAudience(ws, "Spring launch");
    await expect
      .poll(() => rows.nth(1).getByRole("cell").allTextContents())
      .toEqual([expect.any(String), "audience.created", "Spring launch", "created “Spring launch”"]);
    await addMembers(ws, launch, { members: [{ email: "ada@example.com" }, { email: "grace@example.com" }] });
    await upsertMembers(ws, [{ email: "ada@example.com", fields: { company: "Acme" } }]);
    await expect.poll(() => rows.count()).toBe(6);
    // A change about a few members says who, by e-mail address (in the order of the event's ids).
    const both = /^(ada@example\.com, grace@example\.com|grace@example\.com, ada@example\.com)/;
    await expect
      .poll(() => rows.locator("td.summary").allTextContents())
      .toEqual([
        "ada@example.com updated (fields.company)",
        expect.stringMatching(
          /^\+2 entered \((ada|grace)@example\.com, (ada|grace)@example\.com\), −0 left \(manual\)$/,
        ),
        expect.stringMatching(new RegExp(`${both.source} created$`)),
        "created “Spring launch”",
        "created “Before the screen opened”",
      ]);
    expect(await rows.nth(2).getByRole("cell").nth(2).textContent()).toBe("Spring launch");

    await page.getByLabel("Type").selectOption("audience.members_changed");
    await expect.poll(() => rows.count()).toBe(2);
    expect(await page.getByRole("status").textContent()).toMatch(/· 1 event$/);

    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("events");

    await page.getByLabel("Type").selectOption("");
    await page.setViewportSize({ width: 390, height: 800 });
    await createAudience(ws, "Autumn launch");
    await expect.poll(() => rows.nth(1).locator("td.summary").textContent()).toBe("created “Autumn launch”");
    expect(await rows.nth(1).getByRole("link").textContent()).toBe("Autumn launch");
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("events-narrow");
  });
});
