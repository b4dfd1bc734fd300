import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect } from "vitest";
import { createAudience } from "../support/factories.ts";
import { startLiveServer } from "../support/live-server.ts";
import { it as consoleIt } from "./console-fixture.ts";

/**
 * The console's fixture with a server that delivers to receivers on this machine and, after a
 * failed first attempt, waits an hour: a delivery stays pending until someone retries it now.
 */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const it = consoleIt.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({
    settings: { webhooks: { allowPrivate: true, timeoutMs: 1_000, attemptOffsetsMs: [0, 3_600_000] } },
  });
  onCleanup(() => server.close());
  return server;
});

async function startReceiver(onCleanup: (fn: () => Promise<void>) => void) {
  const state = { status: 500, received: 0 };
  const receiver = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      state.received++;
      response.writeHead(state.status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  onCleanup(() => new Promise((resolve) => receiver.close(() => resolve())));
  return { state, url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` };
}

describe("managing a webhook by hand", () => {
  it("edits, disables, enables, retries a pending delivery now, and deletes a webhook", async ({
    console: c,
    ws,
    onTestFinished,
  }) => {
    const receiver = await startReceiver(onTestFinished);
    await createAudience(ws, "Customers");
    const hook = await ws.api.POST("/v0/workspaces/{workspaceId}/webhooks", {
      params: { path: { workspaceId: ws.id } },
      body: { url: receiver.url, description: "Old sync" },
    });
    const { page } = c;
    await page.setViewportSize({ width: 1440, height: 900 });
    await c.open("/webhooks");
    const row = page.getByRole("row", { name: new RegExp(receiver.url) });
    expect(await row.getByRole("rowheader").textContent()).toBe(`${receiver.url}Old sync`);

    // Description and audience filter, changed in the editor; Save waits for a change.
    await row.getByRole("button", { name: `Edit the webhook to ${receiver.url}` }).click();
    const editor = page.getByRole("region", { name: `Edit the webhook to ${receiver.url}` });
    const save = editor.getByRole("button", { name: "Save changes" });
    expect(await save.isDisabled()).toBe(true);
    await editor.getByLabel("Description").fill("Newsletter sync");
    await editor.getByLabel("Customers").check();
    await editor.getByLabel("Endpoint URL").fill("mailto:someone");
    await editor.getByText("The URL must start with http:// or https://.").waitFor();
    expect(await save.isDisabled()).toBe(true);
    await editor.getByLabel("Endpoint URL").fill(receiver.url);
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("webhook-edit");
    await save.click();
    await editor.waitFor({ state: "detached" });
    await expect.poll(() => row.getByRole("rowheader").textContent()).toBe(`${receiver.url}Newsletter sync`);
    expect(await row.getByRole("cell").first().textContent()).toBe("all events1 audience only");
    const stored = await ws.api.GET("/v0/workspaces/{workspaceId}/webhooks/{webhookId}", {
      params: { path: { workspaceId: ws.id, webhookId: hook.id } },
    });
    expect(stored.description).toBe("Newsletter sync");
    expect(stored.audienceIds).toHaveLength(1);

    // Disabled by hand, then enabled again.
    await row.getByRole("button", { name: `Disable the webhook to ${receiver.url}` }).click();
    await expect.poll(() => row.getByRole("cell").nth(1).textContent()).toBe("disabled (by hand)");
    await row.getByRole("button", { name: `Enable the webhook to ${receiver.url}` }).click();
    await expect.poll(() => row.getByRole("cell").nth(1).textContent()).toBe("enabled");

    // A test whose first attempt fails waits an hour for the next: the webhook shows as failing,
    // and Retry now delivers it at once once the receiver is fixed.
    await row.getByRole("button", { name: `Send test to ${receiver.url}` }).click();
    // The attempt is the deliverer's, in the background, and the screen learns of it on its next read.
    const delivered = { timeout: 20_000, interval: 100 };
    await expect.poll(() => row.getByRole("cell").nth(1).textContent(), delivered).toMatch(/^failing since /);
    const delivery = page
      .getByRole("table", { name: `Deliveries to ${receiver.url}` })
      .getByRole("row")
      .nth(1);
    await expect.poll(() => delivery.getByRole("cell").nth(3).textContent(), delivered).toBe("1");
    expect(await delivery.getByRole("cell").nth(2).textContent()).toMatch(/^pendingnext /);
    receiver.state.status = 204;
    await delivery.getByRole("button", { name: /^Retry now webhook.test/ }).click();
    await expect.poll(() => delivery.getByRole("cell").nth(2).textContent(), delivered).toBe("succeeded");
    expect(receiver.state.received).toBe(2);
    await expect.poll(() => row.getByRole("cell").nth(1).textContent(), delivered).toBe("enabled");
    await c.screenshot("webhook-retried");

    // Deleted after a second click that says what goes with it.
    await row.getByRole("button", { name: `Edit the webhook to ${receiver.url}` }).click();
    await editor.getByRole("button", { name: `Delete webhook to ${receiver.url}` }).click();
    await editor.getByText("Delete this webhook and its pending deliveries?").waitFor();
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("webhook-delete-narrow");
    await editor.getByRole("button", { name: "Yes, delete it" }).click();
    await page.getByText("No webhooks yet.").waitFor();
    const left = await ws.api.GET("/v0/workspaces/{workspaceId}/webhooks", {
      params: { path: { workspaceId: ws.id } },
    });
    expect(left.results).toEqual([]);
  });
});
