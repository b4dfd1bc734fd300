import { get } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

/**
 * The docs pages (not operations of the contract, so plain fetch): their servers come from
 * configuration, never from the Host header a client sends, and they carry the headers a page
 * that runs scripts needs.
 */
let plain: LiveServer;
let configured: LiveServer;
beforeAll(async () => {
  [plain, configured] = await Promise.all([
    startLiveServer(),
    startLiveServer({ settings: { http: { publicUrl: "https://audiences.example.com" } } }),
  ]);
});
afterAll(() => Promise.all([plain.close(), configured.close()]));

/** GET /docs/json with a Host header of the client's choosing (fetch would not send one). */
function specFor(server: LiveServer, host: string): Promise<{ servers: unknown }> {
  const { port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    get({ host: "127.0.0.1", port, path: "/docs/json", headers: { host } }, (response) => {
      let text = "";
      response.on("data", (chunk) => {
        text += chunk;
      });
      response.on("end", () => resolve(JSON.parse(text)));
    }).on("error", reject);
  });
}

describe("the API reference's servers", () => {
  it("ignore the Host header", async () => {
    const spec = await specFor(plain, "evil.example");
    expect(spec.servers).toEqual([{ url: "/", description: "This server" }]);
    expect(JSON.stringify(spec)).not.toContain("evil.example");
  });

  it("are PUBLIC_URL when it is set", async () => {
    const spec = await specFor(configured, "evil.example");
    expect(spec.servers).toEqual([{ url: "https://audiences.example.com", description: "This service" }]);
  });
});

describe("the docs pages", () => {
  it.each(["/docs", "/docs/static/index.html", "/docs/static/swagger-ui-bundle.js", "/docs/json", "/v0/openapi.yaml"])(
    "%s is not sniffed, framed or referred, and has a content security policy",
    async (path) => {
      const response = await fetch(plain.baseUrl + path);
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      const csp = response.headers.get("content-security-policy") ?? "";
      if (path.startsWith("/docs")) {
        expect(csp).toContain("default-src 'self'");
        expect(csp).toContain("frame-ancestors 'none'");
        expect(csp).toContain("object-src 'none'");
        expect(csp).not.toContain("upgrade-insecure-requests");
      }
    },
  );
});
