import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect } from "vitest";
import { startLiveServer } from "../support/live-server.ts";
import { it as consoleIt } from "./console-fixture.ts";

/**
 * The console's fixture with a server that delivers webhooks to receivers on this machine
 * (WEBHOOK_ALLOW_PRIVATE) and retries 0.1 s, 0.2 s and 0.3 s after the first attempt.
 */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const it = consoleIt.extend("server", { scope: "file" }, async ({}, { onCleanup }) => {
  const server = await startLiveServer({
    settings: { webhooks: { allowPrivate: true, timeoutMs: 1_000, attemptOffsetsMs: [0, 100, 200, 300] } },
  });
  onCleanup(() => server.close());
  return server;
});

/** A receiver on 127.0.0.1 answering `status`, keeping the event types it was sent. */
async function startReceiver(onCleanup: (fn: () => Promise<void>) => void) {
  const state = { status: 500, received: [] as string[] };
  const receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      state.received.push((JSON.parse(body) as { type: string }).type);
      response.writeHead(state.status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  onCleanup(() => new Promise((resolve) => receiver.close(() => resolve())));
  return { state, url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` };
}

describe("the Webhooks screen", () => {
  it("creates a webhook with its secret shown once, sends a test, and retries a failed delivery", async ({
    console: c,
    onTestFinished,
  }) => {
    const receiver = await startReceiver(onTestFinished);
    await c.open("/webhooks");
    const { page } = c;
    await page.getByText("No webhooks yet.").waitFor();

    // A URL that cannot succeed is said before sending, and Create waits for one that can.
    const create = page.getByRole("button", { name: "Create webhook" });
    expect(await create.isDisabled()).toBe(true);
    await page.getByLabel("Endpoint URL").fill("ftp://example.com/hooks");
    await page.getByText("The URL must start with http:// or https://.").waitFor();
    expect(await create.isDisabled()).toBe(true);
    // One only the API can refuse: its detail, in words, next to the form.
    await page.getByLabel("Endpoint URL").fill("https://user:secret@example.com/hooks");
    await create.click();
    const form = page.getByRole("form", { name: "Add a webhook" });
    await expect.poll(() => form.getByRole("alert").first().textContent()).toMatch(/must not carry credentials/);

    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByLabel("audience.created").check();
    await page.getByLabel("audience.members_changed").check();
    await page.getByRole("button", { name: "Create webhook" }).click();
    const secret = page.getByRole("region", { name: `Signing secret for ${receiver.url}` });
    await secret.waitFor();
    expect(await secret.getByLabel("Signing secret").inputValue()).toMatch(/^whsec_\S{20,}$/);
    expect(await secret.textContent()).toContain("it will not be shown again");
    const row = page.getByRole("row", { name: new RegExp(receiver.url) });
    expect(await row.getByRole("cell").allTextContents()).toEqual([
      "audience.created, audience.members_changed",
      "enabled",
      expect.stringContaining("Send test"),
    ]);

    // The test delivery: tried four times against a receiver answering 500, then failed.
    await row.getByRole("button", { name: `Send test to ${receiver.url}` }).click();
    const log = page.getByRole("table", { name: `Deliveries to ${receiver.url}` });
    const delivery = log.getByRole("row").nth(1);
    await expect.poll(() => delivery.getByRole("cell").nth(2).textContent(), { timeout: 15_000 }).toBe("failed");
    expect(await delivery.getByRole("cell").allTextContents()).toEqual([
      expect.any(String),
      "webhook.test",
      "failed",
      "4",
      expect.stringMatching(/^HTTP 500/),
      expect.stringMatching(/^Retry/),
    ]);
    expect(receiver.state.received).toEqual(["webhook.test", "webhook.test", "webhook.test", "webhook.test"]);
    // A webhook whose deliveries fail says so in its row.
    await expect.poll(() => row.getByRole("cell").nth(1).textContent()).toMatch(/^failing since /);

    // The receiver is fixed; Retry delivers it.
    receiver.state.status = 204;
    await delivery.getByRole("button", { name: /^Retry webhook.test/ }).click();
    await expect.poll(() => delivery.getByRole("cell").nth(2).textContent()).toBe("succeeded");
    expect(await delivery.getByRole("cell").nth(4).textContent()).toBe("HTTP 204");
    expect(await delivery.getByRole("button", { name: /^Retry/ }).count()).toBe(0);
    expect(receiver.state.received).toHaveLength(5);
    await expect.poll(() => row.getByRole("cell").nth(1).textContent()).toBe("enabled");

    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("webhooks");

    // The secret was shown once: after a reload, the webhook is listed without it.
    await page.setViewportSize({ width: 390, height: 800 });
    await page.reload();
    await page.getByRole("button", { name: `Deliveries to ${receiver.url}` }).click();
    await log.getByRole("row").nth(1).waitFor();
    expect(await page.getByLabel("Signing secret").count()).toBe(0);
    expect(await c.accessibilityViolations()).toEqual([]);
    await c.screenshot("webhooks-narrow");
  });

  it("takes a new webhook's secret away when the webhook is deleted", async ({ console: c }) => {
    const { page } = c;
    await page.setViewportSize({ width: 1440, height: 900 });
    await c.open("/webhooks");
    const url = "https://example.com/hooks/deleted-soon";
    await page.getByLabel("Endpoint URL").fill(url);
    await page.getByRole("button", { name: "Create webhook" }).click();
    await page.getByRole("region", { name: `Signing secret for ${url}` }).waitFor();

    const row = page.getByRole("row", { name: new RegExp(url) });
    await row.getByRole("button", { name: `Edit the webhook to ${url}` }).click();
    const editor = page.getByRole("region", { name: `Edit the webhook to ${url}` });
    await editor.getByRole("button", { name: `Delete webhook to ${url}` }).click();
    await editor.getByRole("button", { name: "Yes, delete it" }).click();
    await page.getByText("No webhooks yet.").waitFor();
    expect(await page.getByLabel("Signing secret").count()).toBe(0);
  });
});
