import { ApiError } from "@audience-service/client";
import type { FastifyReply, FastifyRequest } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.ts";
import { openStore } from "../../src/platform/db/database.ts";
import { checkedClient } from "../support/checked-client.ts";
import { checkResponse } from "../support/contract.ts";
import { createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { ADMIN_TOKEN, call, type LiveServer } from "../support/live-server.ts";

// The contract check that every API test goes through (the checked SDK client's middleware in
// test/support/checked-client.ts, and call() in test/support/live-server.ts for raw requests) must
// fail a test when the server breaks the contract. This server is the real application with one
// onSend hook that can break what a handler answered (so it is not the fixture's live server).

type Sabotage = (request: FastifyRequest, reply: FastifyReply, payload: string) => string;
let sabotage: Sabotage | undefined;
let server: LiveServer;
let ws: TestWorkspace;
let audience: string;

beforeAll(async () => {
  const store = await openStore({ poolSize: 5 });
  const app = await buildApp({ store, settings: { http: { adminToken: ADMIN_TOKEN } } });
  app.addHook("onSend", async (request, reply, payload) =>
    sabotage && typeof payload === "string" ? sabotage(request, reply, payload) : payload,
  );
  const baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });
  server = {
    baseUrl,
    store,
    databaseUrl: undefined,
    async close() {
      await app.close();
      await store.close();
    },
  };
  ws = await createWorkspace(server);
  audience = await createAudience(ws, "Weekly digest readers");
});
afterAll(() => server.close());

const editBody =
  (edit: (body: any) => void): Sabotage =>
  (_request, _reply, payload) => {
    const body = JSON.parse(payload);
    edit(body);
    return JSON.stringify(body);
  };

describe("a server that breaks the contract fails the API tests", () => {
  it("passes while the server keeps the contract", async () => {
    sabotage = undefined;
    const path = { workspaceId: ws.id, audienceId: audience };
    const read = await ws.api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}", { params: { path } });
    expect(read).toEqual({ id: audience, name: "Weekly digest readers" });
  });

  it.each<[string, string, string, Sabotage, string]>([
    [
      "an extra field",
      "GET",
      "/audiences/{a}",
      editBody((b) => Object.assign(b, { extra: 1 })),
      "/extra: is not allowed",
    ],
    ["a missing field", "GET", "/audiences/{a}", editBody((b) => delete b.name), "/name: is required"],
    [
      "a field of the wrong type",
      "GET",
      "/audiences/{a}",
      editBody((b) => Object.assign(b, { name: 7 })),
      "/name: must be string",
    ],
    [
      "a timestamp that is not date-time",
      "GET",
      "/audiences",
      editBody((b) => Object.assign(b.results[0], { createdAt: "yesterday" })),
      '/results/0/createdAt: must match format "date-time"',
    ],
    [
      "a wrong success status",
      "POST",
      "/audiences",
      (_q, reply, payload) => {
        reply.code(200);
        return payload;
      },
      "status 200 is not documented for createAudience",
    ],
    [
      "an undocumented error status",
      "GET",
      "/audiences/{a}",
      (_q, reply) => {
        reply.code(409).type("application/problem+json");
        return problem(409, "audience_archived");
      },
      "status 409 is not documented for getAudience",
    ],
    [
      "a problem document without its code",
      "GET",
      "/audiences/aud_missing",
      editBody((b) => delete b.code),
      "/code: is required",
    ],
    [
      "a problem sent as application/json",
      "GET",
      "/audiences/aud_missing",
      (_q, reply, payload) => {
        reply.type("application/json");
        return payload;
      },
      "content-type application/json is not one of the declared media types: application/problem+json",
    ],
    [
      "a problem whose status differs from the HTTP status",
      "GET",
      "/audiences/aud_missing",
      editBody((b) => Object.assign(b, { status: 400 })),
      "the problem document says 400, but the HTTP status is 404",
    ],
  ])("catches %s", async (_name, method, template, breakIt, message) => {
    const url = `/v0/workspaces/${ws.id}${template.replace("{a}", audience)}`;
    const send = () =>
      call(server, method, url, {
        token: ws.key,
        body: method === "POST" ? { name: `New audience ${Math.random()}` } : undefined,
      });
    sabotage = breakIt;
    try {
      await expect(send()).rejects.toThrow(message);
    } finally {
      sabotage = undefined;
    }
    // The same request passes once the server answers as it should.
    await expect(send()).resolves.toBeDefined();
  });

  it("catches a broken response in the SDK tests too", async () => {
    const api = checkedClient(server.baseUrl, ws.key);
    const path = { workspaceId: ws.id, audienceId: audience };
    sabotage = editBody((b) => Object.assign(b, { extra: 1 }));
    try {
      const call = api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}", { params: { path } });
      await expect(call).rejects.toThrow("/extra: is not allowed");
      await expect(call).rejects.not.toBeInstanceOf(ApiError);
    } finally {
      sabotage = undefined;
    }
  });
});

function problem(status: number, code: string): string {
  return JSON.stringify({ type: `urn:problem-type:audience-service:${code}`, title: "T", status, code });
}

describe("response headers", () => {
  const limited = (headers: Record<string, string>) => ({
    method: "GET",
    url: "/v0/workspaces/ws_1/audiences/aud_1",
    status: 429,
    headers: { "content-type": "application/problem+json", ...headers },
    body: problem(429, "rate_limited"),
  });
  const rateHeaders = {
    "retry-after": "12",
    "ratelimit-limit": "6000",
    "ratelimit-remaining": "0",
    "ratelimit-reset": "12",
  };

  it("declared by the contract are checked: required ones present, values valid", () => {
    expect(() => checkResponse(limited(rateHeaders))).not.toThrow();
    const { "retry-after": _omitted, ...withoutRetry } = rateHeaders;
    expect(() => checkResponse(limited(withoutRetry))).toThrow("header Retry-After: is required");
    expect(() => checkResponse(limited({ ...rateHeaders, "ratelimit-remaining": "-1" }))).toThrow(
      "header RateLimit-Remaining",
    );
    expect(() => checkResponse(limited({ ...rateHeaders, "retry-after": "soon" }))).toThrow("header Retry-After");
  });
});
