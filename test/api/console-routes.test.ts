import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { beforeAll, describe, expect } from "vitest";
import { buildConsole, CONSOLE_OUT } from "../../scripts/build-console.ts";
import { CONSOLE_CSP, consoleRoutes } from "../../src/platform/pages/console-routes.ts";
import { it } from "../support/fixture.ts";

describe("the console's routes", () => {
  beforeAll(() => void buildConsole());

  it("serves the page under its content security policy, for every path the console routes", async ({ server }) => {
    for (const path of ["/console/", "/console/audiences/aud_123", "/console/fields"]) {
      const response = await fetch(`${server.baseUrl}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      expect(response.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(await response.text()).toMatch(/<div id="root"><\/div>/);
    }
    const bare = await fetch(`${server.baseUrl}/console`, { redirect: "manual" });
    expect(bare.status).toBe(301);
    expect(bare.headers.get("location")).toBe("/console/");
  });

  it("lets browsers keep the bundles, which carry their content's hash, and has no others", async ({ server }) => {
    const [bundle] = readdirSync(join(CONSOLE_OUT, "assets")).filter((name) => name.endsWith(".js"));
    const response = await fetch(`${server.baseUrl}/console/assets/${bundle}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/javascript/);
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const missing = await fetch(`${server.baseUrl}/console/assets/index-0000.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).code).toBe("route_not_found");
    // Files of the build that are not the console's (its inputs' digest) are not served.
    expect((await fetch(`${server.baseUrl}/console/.inputs`)).headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("says how to build the console when it is not built", async () => {
    const app = Fastify();
    await app.register(consoleRoutes, { dir: mkdtempSync(join(tmpdir(), "no-console-")) });
    const response = await app.inject({ method: "GET", url: "/console/" });
    expect(response.statusCode).toBe(503);
    expect(response.body).toMatch(/npm run build/);
    expect(response.headers["content-security-policy"]).toBe(CONSOLE_CSP);
    await app.close();
  });
});
