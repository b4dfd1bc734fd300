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
    ["IPv4-compatible IPv6 loopback", "http://[::7f00:1]/hook"],
    ["IPv4-compatible IPv6 loopback, dotted", "http://[::127.0.0.1]/hook"],
    ["the metadata address, IPv4-compatible", "http://[::a9fe:a9fe]/hook"],
    ["a private address, IPv4-compatible", "http://[::a00:1]/hook"],
    ["site-local IPv6", "http://[fec0::1]/hook"],
    ["the metadata address through local-use NAT64", "http://[64:ff9b:1::a9fe:a9fe]/hook"],
    ["the metadata address through NAT64", "http://[64:ff9b::a9fe:a9fe]/hook"],
    ["a private address through 6to4", "http://[2002:a00:1::1]/hook"],
    ["loopback through Teredo", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook"],
    ["a name resolving to an IPv4-compatible loopback", "https://compat.example.com/hook"],
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
      // Whoever meant a receiver of their own is told the way: WEBHOOK_ALLOW_PRIVATE.
      expect(error.problem?.detail).toMatch(/, which is not a public address\. .*WEBHOOK_ALLOW_PRIVATE=true\.$/);
      expect((await api.GET(WEBHOOKS, { params: { path: { workspaceId } } })).results).toEqual([]);
    },
  );

  it.for([
    ["a port over 65535", "http://example.com:99999/", "invalid_request"],
    ["an IPv4 address out of range", "http://256.0.0.1/", "invalid_request"],
    ["an IPv4 number out of range", "http://4294967296/", "invalid_request"],
    ["credentials and no host", "http://a:b@/", "invalid_request"],
    ["a NUL in the host", "http://ex%00ample/", "invalid_request"],
    // Credentials are refused, so no read can show them.
    ["a user and a password", "https://user:secret@hooks.example.com/in", "webhook_url_not_allowed"],
    ["a user alone", "https://token@hooks.example.com/in", "webhook_url_not_allowed"],
    ["a password alone", "https://:secret@hooks.example.com/in", "webhook_url_not_allowed"],
  ] as const)(
    "are refused naming /body/url, created or changed, for %s",
    async ([, url, code], { api, workspaceId }) => {
      const kept = await api.POST(WEBHOOKS, {
        params: { path: { workspaceId } },
        body: { url: "https://hooks.example.com/" },
      });
      const errors = [
        await rejectionOf(api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url } })),
        await rejectionOf(api.PATCH(WEBHOOK, { params: { path: { workspaceId, webhookId: kept.id } }, body: { url } })),
      ];
      for (const error of errors) {
        expect([error.status, error.code, error.problem?.errors?.map((e) => e.pointer)]).toEqual([
          400,
          code,
          ["/body/url"],
        ]);
      }
      const listed = await api.GET(WEBHOOKS, { params: { path: { workspaceId } } });
      expect(listed.results.map((w) => w.url)).toEqual(["https://hooks.example.com/"]);
      expect(JSON.stringify(listed)).not.toContain("secret@");
    },
  );

  it("are accepted when public, IPv6 and NAT64 forms of public addresses included", async ({ api, workspaceId }) => {
    for (const url of [
      "http://[2606:4700:4700::1111]/hook",
      "http://[64:ff9b::5db8:d70e]/hook",
      "http://[::ffff:5db8:d70e]/",
    ]) {
      const webhook = await api.POST(WEBHOOKS, { params: { path: { workspaceId } }, body: { url } });
      expect(webhook.url).toBe(url);
    }
  });

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

  it.for([
    ["an IPv4-compatible loopback", "::7f00:1"],
    ["the metadata address through local-use NAT64", "64:ff9b:1::a9fe:a9fe"],
    ["site-local IPv6", "fec0::1"],
  ] as const)(
    "are checked again at delivery: a name now resolving to %s is not connected to",
    async ([, address], { api, workspaceId, ws }) => {
      const host = `rebinding-${address.replaceAll(":", "-")}.example.com`;
      HOSTS[host] = ["2606:4700:4700::1111"];
      const webhook = await api.POST(WEBHOOKS, {
        params: { path: { workspaceId } },
        body: { url: `http://${host}:9/hook` },
      });
      HOSTS[host] = [address];
      await createAudience(ws);
      const path = { workspaceId, webhookId: webhook.id };
      await expect
        .poll(async () => (await api.GET(`${WEBHOOK}/deliveries`, { params: { path } })).results[0]?.lastError)
        .toBe(`${host} resolves to ${address}, which is not a public address`);
    },
  );
});
