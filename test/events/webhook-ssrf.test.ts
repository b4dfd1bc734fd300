// A webhook URL must lead to public addresses only, checked at creation and again at every
// delivery (DNS can change), unless the server runs with WEBHOOK_ALLOW_PRIVATE=true.
import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { createAudience } from "../support/factories.ts";
import { HOSTS, strictIt as it } from "./webhook-fixture.ts";

const WEBHOOKS = "/v0/workspaces/{workspaceId}/webhooks";
const WEBHOOK = "/v0/workspaces/{workspaceId}/webhooks/{webhookId}";

describe("webhook URLs", () => {
  it.for([
    ["loopback", "http://127.0.0.1:8080/hook"],
    ["a private network", "http://10.0.0.7/hook"],
    ["the cloud metadata address", "http://169.254.169.254/latest/meta-data"],
    ["IPv6 loopback", "http://[::1]/hook"],
    ["IPv4-mapped IPv6 loopback", "http://[::ffff:127.0.0.1]/hook"],
    ["IPv4-mapped loopback in hex", "http://[::ffff:7f00:1]/hook"],
    ["unique-local IPv6", "http://[fd00::1]/hook"],
    ["0.0.0.0", "http://0.0.0.0/hook"],
    ["a name resolving to a private address", "https://internal.example.com/hook"],
    ["a name resolving to the metadata address", "https://metadata.example.com/hook"],
    ["a name resolving to a public and a loopback address", "https://sneaky.example.com/hook"],
    ["localhost", "http://localhost:3000/hook"],
  ] as const)(
    "are refused when they lead to %s (400 webhook_url_not_allowed)",
    async ([, url], { api, workspaceId }) => {
      const error = await rejectionOf(api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url } }));
      expect([error.status, error.code]).toEqual([400, "webhook_url_not_allowed"]);
      expect((await api.GET(WEBHOOKS, { params: { path: { workspaceId } } })).results).toEqual([]);
    },
  );

  it("are accepted when public, and refused when changed to a private one", async ({ api, workspaceId }) => {
    const webhook = await api.POST(WEBHOOKS, {
      params: { path: { workspaceId } },
      body: { url: "https://hooks.example.com/in" },
    });
    const error = await rejectionOf(
      api.PATCH(WEBHOOK, {
        params: { path: { workspaceId, webhookId: webhook.id } },
        body: { url: "http://10.1.1.1/" },
      }),
    );
    expect([error.status, error.code]).toEqual([400, "webhook_url_not_allowed"]);
  });

  it("are checked again at delivery: a name now resolving to a private address is not connected to", async ({
    api,
    workspaceId,
    ws,
  }) => {
    HOSTS["rebinding.example.com"] = ["93.184.215.14"];
    const webhook = await api.POST(WEBHOOKS, {
      params: { path: { workspaceId } },
      body: { url: "http://rebinding.example.com:9/hook" },
    });
    HOSTS["rebinding.example.com"] = ["127.0.0.1"];
    await createAudience(ws);
    const path = { workspaceId, webhookId: webhook.id };
    await expect
      .poll(async () => (await api.GET(`${WEBHOOK}/deliveries`, { params: { path } })).results[0]?.lastError)
      .toBe("rebinding.example.com resolves to 127.0.0.1, which is not a public address");
  });
});
