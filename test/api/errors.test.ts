import { describe, expect } from "vitest";
import { addMembers, createAudience } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { call, urlOf } from "../support/live-server.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";
const WEBHOOKS = "/v0/workspaces/{workspaceId}/webhooks";
const FIELD = "/v0/workspaces/{workspaceId}/fields/{fieldKey}";

describe("problem documents", () => {
  it("answer unknown routes with 404 route_not_found", async ({ server }) => {
    const response = await call(server, "GET", "/v0/nothing-here");
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(response.problem).toMatchObject({
      type: "urn:problem-type:audience-service:route_not_found",
      title: "Route not found",
      status: 404,
      code: "route_not_found",
    });
    expect(response.problem?.requestId).toMatch(/^req_/);
  });

  it("answer methods the contract does not have, HEAD included, with 404 route_not_found", async ({ server, ws }) => {
    for (const method of ["PUT", "PATCH"]) {
      const response = await call(server, method, urlOf(AUDIENCES, { workspaceId: ws.id }), { token: ws.key });
      expect(response.status, method).toBe(404);
      expect(response.problem?.code, method).toBe("route_not_found");
    }
    // A HEAD answer carries no body, so there is no problem document to check against the contract.
    const head = await fetch(`${server.baseUrl}${urlOf(AUDIENCES, { workspaceId: ws.id })}`, {
      method: "HEAD",
      headers: { authorization: `Bearer ${ws.key}` },
    });
    expect(head.status, "HEAD").toBe(404);
  });

  it("carry every validation error's pointer and a readable detail", async ({ ws, server }) => {
    const audienceId = await createAudience(ws);
    const response = await call(server, "POST", urlOf(MEMBERS, { workspaceId: ws.id, audienceId }), {
      token: ws.key,
      body: { memberIds: "m1" },
    });
    expect(response.status).toBe(400);
    expect(response.problem).toMatchObject({
      type: "urn:problem-type:audience-service:invalid_request",
      title: "Invalid request",
      status: 400,
      code: "invalid_request",
      detail: "memberIds must be a list.",
      errors: [{ pointer: "/body/memberIds", message: "must be a list" }],
    });
  });

  it.for([
    ["POST", "", { name: "" }, "name must not be empty."],
    [
      "POST",
      "",
      { name: "   " },
      "name must hold a character other than spaces, and no control characters (line breaks, tabs).",
    ],
    ["POST", "", { name: "x".repeat(201) }, "name must be at most 200 characters long."],
    ["GET", "limit=5000", undefined, "The query parameter limit must be at most 500."],
  ] as const)(
    "say in words what the contract refuses: %s %s %j",
    async ([method, query, body, detail], { ws, server }) => {
      const response = await call(server, method, urlOf(AUDIENCES, { workspaceId: ws.id }, query), {
        token: ws.key,
        ...(body ? { body } : {}),
      });
      expect(response.status).toBe(400);
      expect(response.problem?.detail).toBe(detail);
    },
  );

  it("say which webhook URL and field key are refused, without a regular expression", async ({ ws, server }) => {
    const hook = await call(server, "POST", urlOf(WEBHOOKS, { workspaceId: ws.id }), {
      token: ws.key,
      body: { url: "ftp://example.com/hooks" },
    });
    expect(hook.problem?.detail).toBe("url must be an http:// or https:// URL.");
    const field = await call(server, "PUT", urlOf(FIELD, { workspaceId: ws.id, fieldKey: "1st" }), {
      token: ws.key,
      body: { type: "number" },
    });
    expect(field.problem?.detail).toBe(
      "The path parameter fieldKey must be a field key: a letter, then at most 63 letters, digits or _.",
    );
  });

  it.for([
    ["an empty JSON body", "", "malformed_json"],
    ["a JSON array", "[]", "invalid_request"],
    ["a JSON string", '"name"', "invalid_request"],
    ["null", "null", "invalid_request"],
    ["a prototype-polluting key", '{"name":"x","__proto__":{"admin":true}}', "malformed_json"],
    ["a constructor-polluting key", '{"name":"x","constructor":{"prototype":{"admin":true}}}', "malformed_json"],
    ["deeply nested JSON", `${"[".repeat(5000)}${"]".repeat(5000)}`, "invalid_request"],
  ] as const)("answer %s with 400", async ([_case, rawBody, code], { ws, server }) => {
    const response = await call(server, "POST", urlOf(AUDIENCES, { workspaceId: ws.id }), {
      token: ws.key,
      rawBody,
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
    expect(response.problem?.code).toBe(code);
  });

  it("never answer 5xx for SQL-looking or unusual input, and store it verbatim", async ({ ws, api, workspaceId }) => {
    const names = ["Robert'); DROP TABLE audiences;--", "%_\\", "名前 🎉", "\u202Eevil", "a\u2028b"];
    for (const name of names) {
      const audienceId = await createAudience(ws, name);
      const audience = await api.GET(`${AUDIENCES}/{audienceId}`, { params: { path: { workspaceId, audienceId } } });
      expect(audience.name).toBe(name);
    }
    const ids = ["x' OR '1'='1", "$1", "🎉", "a".repeat(255)];
    const added = await addMembers(ws, await createAudience(ws), { memberIds: ids });
    expect(added.added).toBe(4);
  });

  it("answer a query string with repeated or odd parameters with 400, not 500", async ({ ws, server }) => {
    const audienceId = await createAudience(ws);
    for (const query of ["limit=1&limit=2", "limit=1e3", "limit=-1", "after=%00", "search=%FF"]) {
      const response = await call(server, "GET", urlOf(MEMBERS, { workspaceId: ws.id, audienceId }, query), {
        token: ws.key,
      });
      expect(response.status, query).toBeGreaterThanOrEqual(200);
      expect(response.status, query).toBeLessThan(500);
    }
  });
});
