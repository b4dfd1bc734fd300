import { readFileSync } from "node:fs";
import { describe, expect } from "vitest";
import { parse } from "yaml";
import { test } from "../support/fixture.ts";
import { REPO_ROOT } from "./sdk-support.ts";

// /docs and /v0/openapi.* are not operations of the contract, so these use plain fetch (the
// contract check of call() expects 404 for them). No request carries a key.

const contractText = readFileSync(`${REPO_ROOT}openapi/openapi.yaml`, "utf8");

const it = test.extend("get", { scope: "file" }, ({ server }) => {
  const get = (path: string) => fetch(server.baseUrl + path);
  return get;
});

describe("the contract over HTTP", () => {
  it("serves /v0/openapi.yaml as written", async ({ get }) => {
    const response = await get("/v0/openapi.yaml");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/yaml; charset=utf-8");
    expect(await response.text()).toBe(contractText);
  });

  it("serves /v0/openapi.json, the same document", async ({ get }) => {
    const response = await get("/v0/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await response.json()).toEqual(parse(contractText));
  });
});

/** The page at /docs, read once for the file, and every src= and href= of it. */
const withPage = it.extend("page", { scope: "file" }, async ({ get }) => {
  const response = await get("/docs");
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
  const html = await response.text();
  return { html, assets: [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "") };
});

describe("the API reference at /docs", () => {
  withPage("is a Swagger UI page titled after the API", ({ page: { html, assets } }) => {
    expect(html).toContain("<title>Audience Service API reference</title>");
    expect(html).toContain('<div id="swagger-ui"></div>');
    expect(assets).toEqual(
      expect.arrayContaining(["/docs/static/swagger-ui-bundle.js", "/docs/static/swagger-ui.css"]),
    );
  });

  withPage(
    "loads every script, style and icon from this server, none from a CDN",
    async ({ get, page: { assets } }) => {
      expect(assets.length).toBeGreaterThanOrEqual(5);
      for (const asset of assets) {
        expect(asset, asset).toMatch(/^\/docs\/static\/[\w.-]+$/);
        const response = await get(asset);
        expect(response.status, asset).toBe(200);
        expect(response.headers.get("content-type"), asset).toMatch(/^(application\/javascript|text\/css|image\/png)/);
        if (asset.endsWith(".css"))
          expect(await response.text(), asset).not.toMatch(/url\(\s*["']?(https?:)?\/\/|@import/);
        else await response.arrayBuffer();
      }
    },
  );

  it("points Swagger UI at this server's contract, with the online validator off", async ({ get }) => {
    const initializer = await (await get("/docs/static/swagger-initializer.js")).text();
    expect(initializer).toContain("url: resolveUrl('./json')");
    expect(initializer).toContain("validatorUrl: null");
    // No absolute URL in any string (one only appears in a code comment).
    expect(initializer).not.toMatch(/["'`]https?:\/\//);

    const spec = await (await get("/docs/json")).json();
    const contract = parse(contractText);
    expect(Object.keys(spec.paths)).toEqual(Object.keys(contract.paths));
    expect(spec.info).toEqual(contract.info);
    // "Try it out" calls the server that served the page, whatever its port: a relative URL,
    // never one built from the request's Host header.
    expect(spec.servers).toEqual([{ url: "/", description: "This server" }]);
  });
});
