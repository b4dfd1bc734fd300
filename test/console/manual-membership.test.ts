import { describe, expect } from "vitest";
import { allMemberIds, createAudience, upsertMembers } from "../support/factories.ts";
import { it } from "./console-fixture.ts";

const emailsOf = async (ws: Parameters<typeof allMemberIds>[0], audienceId: string) => {
  const ids = await allMemberIds(ws, audienceId);
  const members = await Promise.all(
    ids.map((memberId) =>
      ws.api.GET("/v0/workspaces/{workspaceId}/members/{memberId}", {
        params: { path: { workspaceId: ws.id, memberId } },
      }),
    ),
  );
  return members.map((member) => member.email).sort();
};

describe("membership by hand", () => {
  it("adds a selection to an audience, excludes one from a rule, adds people by search and e-mail, and merges", async ({
    console: c,
    ws,
  }) => {
    const customers = await createAudience(ws, "Customers");
    const acme = await createAudience(ws, "Acme people");
    await ws.api.PUT("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
      params: { path: { workspaceId: ws.id, audienceId: acme } },
      body: { filter: { field: "fields.company", op: "eq", value: "Acme" } },
    });
    await upsertMembers(ws, [
      { email: "ada@example.com", fields: { firstName: "Ada", company: "Acme" } },
      { email: "grace@example.com", fields: { firstName: "Grace", company: "Navy" } },
      { email: "lin@example.com", fields: { firstName: "Lin", company: "Initech" } },
    ]);
    const { page } = c;
    await page.setViewportSize({ width: 1440, height: 900 });

    // Two people selected on the Members screen, added to Customers at once.
    await c.open("/members");
    await page.getByText("3 members").waitFor();
    await page.getByLabel("Select ada@example.com").check();
    await page.getByLabel("Select grace@example.com").check();
    const selection = page.getByRole("region", { name: "2 selected" });
    await selection.getByLabel("Add to audience").selectOption({ label: "Customers" });
    await selection.getByRole("button", { name: "Add 2 selected members" }).click();
    await selection.getByText("2 added to Customers.").waitFor();
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("members-selection");
    expect(await emailsOf(ws, customers)).toEqual(["ada@example.com", "grace@example.com"]);

    // In a rule audience, a member is excluded: it stays out though the rule matches it.
    await c.open(`/audiences/${acme}`);
    const members = page.getByRole("table", { name: "Members" });
    await members.getByRole("cell", { name: "ada@example.com", exact: true }).waitFor();
    await members.getByRole("button", { name: "Exclude ada@example.com" }).click();
    await members.getByRole("cell", { name: "ada@example.com", exact: true }).waitFor({ state: "detached" });
    const explained = await ws.api.GET(
      "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members/{memberId}/explanation",
      {
        params: {
          path: { workspaceId: ws.id, audienceId: acme, memberId: (await allMemberIds(ws, customers))[0] ?? "" },
        },
      },
    );
    expect(explained.isMember).toBe(false);

    // People added by hand: one found by name, one by an e-mail no member has yet.
    const add = page.getByRole("region", { name: "Add people by hand" });
    await add.getByLabel("Find or type an e-mail").fill("grace");
    await add.getByRole("button", { name: "Add grace@example.com" }).click();
    await add.getByText("grace@example.com added to Acme people.").waitFor();
    await add.getByLabel("Find or type an e-mail").fill("new@example.com");
    await add.getByRole("button", { name: "Add new@example.com" }).click();
    await add.getByText("new@example.com added to Acme people.").waitFor();
    await members.getByRole("cell", { name: "new@example.com", exact: true }).waitFor();
    expect(await emailsOf(ws, acme)).toEqual(["grace@example.com", "new@example.com"]);
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audience-by-hand");

    // Two audiences merged into a new one holding both one's members.
    await page.getByRole("link", { name: "← Audiences" }).click();
    await page.getByText("Merge two audiences").click();
    const merge = page.getByRole("form", { name: "Merge two audiences" });
    const mergeButton = merge.getByRole("button", { name: "Merge" });
    expect(await mergeButton.isDisabled()).toBe(true);
    await merge.getByLabel("Merge", { exact: true }).selectOption({ label: "Customers" });
    await merge.getByLabel("with").selectOption({ label: "Customers" });
    await merge.getByText("Choose two different audiences.").waitFor();
    expect(await mergeButton.isDisabled()).toBe(true);
    await merge.getByLabel("with").selectOption({ label: "Acme people" });
    await merge.getByLabel("Name of the merged audience").fill("Everyone we know");
    await mergeButton.click();
    await merge.getByRole("link", { name: "Everyone we know" }).click();
    await page.getByRole("heading", { name: "Everyone we know", level: 1 }).waitFor();
    await expect.poll(() => page.locator(".diff").first().textContent()).toBe("3 members");
    await c.screenshot("audience-merged");
  });

  it("deletes a member, and shows an archived audience read-only until it is restored", async ({ console: c, ws }) => {
    const customers = await createAudience(ws, "Customers");
    await upsertMembers(ws, [{ email: "lin@example.com" }, { email: "sam@example.com" }]);
    const { page } = c;
    await c.open("/members");
    await page.getByRole("button", { name: "lin@example.com" }).click();
    const detail = page.getByRole("region", { name: "lin@example.com" });
    await detail.getByRole("button", { name: "Delete member lin@example.com" }).click();
    await detail.getByRole("button", { name: "Yes, delete lin@example.com" }).click();
    await detail.waitFor({ state: "detached" });
    await page.getByText("1 member", { exact: true }).waitFor();
    expect(await page.getByRole("button", { name: "lin@example.com", exact: true }).count()).toBe(0);

    await ws.api.DELETE("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
      params: { path: { workspaceId: ws.id, audienceId: customers } },
    });
    await c.open(`/audiences/${customers}`);
    const note = page.getByRole("note");
    await note.getByText("Customers is archived.").waitFor();
    expect(await page.getByRole("button", { name: "Add a condition" }).count()).toBe(0);
    expect(await page.getByRole("region", { name: "Add people by hand" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Take a snapshot" }).count()).toBe(0);
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("audience-archived-narrow");
    await note.getByRole("button", { name: "Restore Customers" }).click();
    await page.getByRole("button", { name: "Add a condition" }).waitFor();
    expect(await page.getByRole("note").count()).toBe(0);
  });
});
