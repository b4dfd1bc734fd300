import { describe, expect, it } from "vitest";
import { checkResponse, documentedOperations, loadContract, resolveOperation } from "../support/contract.ts";

const json = { "content-type": "application/json; charset=utf-8" };
const problemJson = { "content-type": "application/problem+json; charset=utf-8" };
const getAudience = { method: "GET", url: "/v0/workspaces/ws_1/audiences/aud_1", status: 200, headers: json };

const problem = (status: number, code: string) =>
  JSON.stringify({ type: `urn:problem-type:audience-service:${code}`, title: "T", status, code });

describe("checkResponse", () => {
  it("accepts a response that matches the contract", () => {
    expect(() => checkResponse({ ...getAudience, body: '{"id":"aud_1","name":"A"}' })).not.toThrow();
    expect(() =>
      checkResponse({
        ...getAudience,
        url: `${getAudience.url}?x=1`,
        headers: { "Content-Type": "application/json" },
        body: '{"id":"aud_1","name":"A"}',
      }),
    ).not.toThrow();
    expect(() =>
      checkResponse({ ...getAudience, status: 404, headers: problemJson, body: problem(404, "audience_not_found") }),
    ).not.toThrow();
    expect(() =>
      checkResponse({
        method: "DELETE",
        url: "/v0/workspaces/ws_1/audiences/aud_1",
        status: 204,
        headers: {},
        body: "",
      }),
    ).not.toThrow();
    expect(() =>
      checkResponse({
        method: "GET",
        url: "/v0/nope",
        status: 404,
        headers: problemJson,
        body: problem(404, "route_not_found"),
      }),
    ).not.toThrow();
  });

  it.each([
    ["an extra property", { body: '{"id":"aud_1","name":"A","extra":1}' }, "/extra: is not allowed"],
    ["a missing property", { body: '{"id":"aud_1"}' }, "/name: is required"],
    ["a wrong type", { body: '{"id":"aud_1","name":5}' }, "/name: must be string"],
    ["an undocumented status", { status: 418, body: '{"id":"aud_1","name":"A"}' }, "status 418 is not documented"],
    [
      "a wrong content type",
      { headers: { "content-type": "text/plain" }, body: '{"id":"aud_1","name":"A"}' },
      "text/plain",
    ],
    ["a body that is not JSON", { body: "{nope" }, "not valid JSON"],
    ["a 204 with a body", { method: "DELETE", status: 204, headers: {}, body: "{}" }, "declares no content"],
    [
      "an unknown path with a non-404 status",
      { url: "/v0/nope", body: '{"id":"aud_1","name":"A"}' },
      "expected status 404",
    ],
    ["an unknown method on a known path", { method: "PUT", body: '{"id":"aud_1","name":"A"}' }, "expected status 404"],
    [
      "an unknown route answered with another code",
      { url: "/v0/nope", status: 404, headers: problemJson, body: problem(404, "audience_not_found") },
      "route_not_found",
    ],
    [
      "a problem code not in the enum",
      { status: 404, headers: problemJson, body: problem(404, "no_such_code") },
      "/code: must be equal to one of the allowed values",
    ],
    [
      "a problem status that differs from the HTTP status",
      { status: 404, headers: problemJson, body: problem(400, "audience_not_found") },
      "/status",
    ],
  ])("rejects %s", (_name, override, message) => {
    const res = { ...getAudience, ...override };
    expect(() => checkResponse(res)).toThrow(message);
    expect(() => checkResponse(res)).toThrow(`${res.method} ${res.url} -> ${res.status}`);
  });

  it("truncates long bodies in the message", () => {
    const body = JSON.stringify({ id: "aud_1", name: 5, pad: "x".repeat(2000) });
    expect(() => checkResponse({ ...getAudience, body })).toThrow(/body: .{500}… \(\d+ chars\)$/);
  });
});

describe("path matching", () => {
  it("prefers a static segment to a parameter", () => {
    expect(resolveOperation("POST", "/v0/workspaces/w/audiences/merge")?.operationId).toBe("mergeAudiences");
    expect(resolveOperation("GET", "/v0/workspaces/w/audiences/abc")?.operationId).toBe("getAudience");
    expect(resolveOperation("GET", "/v0/workspaces/w/audiences/abc/members?limit=3")?.operationId).toBe(
      "listAudienceMembers",
    );
    expect(resolveOperation("GET", "/v0/workspaces/w/audiences/merge")?.operationId).toBe("getAudience");
    expect(resolveOperation("PUT", "/v0/workspaces/w/audiences/merge")).toBeUndefined();
    expect(resolveOperation("GET", "/v0/workspaces/w/audiences/")).toBeUndefined();
  });

  it("lists every documented operation", () => {
    const operations = documentedOperations();
    expect(operations).toContainEqual({
      method: "POST",
      path: "/v0/workspaces/{workspaceId}/audiences/merge",
      operationId: "mergeAudiences",
    });
    expect(new Set(operations.map((o) => o.operationId)).size).toBe(operations.length);
    expect(operations.every((o) => typeof o.operationId === "string")).toBe(true);
  });
});

describe("the contract's own examples", () => {
  const { document } = loadContract();
  const examples = documentedOperations().flatMap(({ method, path }) =>
    Object.entries<any>(document.paths[path][method.toLowerCase()].responses).flatMap(([status, response]) => {
      const resolved = response.$ref ? document.components.responses[response.$ref.split("/").pop()] : response;
      return Object.entries<any>(resolved.content ?? {}).flatMap(([mediaType, media]) =>
        Object.values<any>(media.examples ?? {}).map((example) => ({
          name: `${method} ${path} ${status} ${mediaType}`,
          res: {
            method,
            url: path.replace(/\{[^}]+\}/g, "x1"),
            status: Number(status),
            headers: {
              "content-type": mediaType,
              ...Object.fromEntries(
                Object.entries<any>(resolved.headers ?? {}).map(([name, header]) => [
                  name.toLowerCase(),
                  String(header.example),
                ]),
              ),
            },
            // A file's example (CSV, NDJSON) is its text; any other is a JSON document.
            body: /^application\/([\w.-]+\+)?json$/.test(mediaType) ? JSON.stringify(example.value) : example.value,
          },
        })),
      );
    }),
  );

  it("has examples to check", () => expect(examples.length).toBeGreaterThan(10));
  it.each(examples)("$name passes", ({ res }) => expect(() => checkResponse(res)).not.toThrow());
});
