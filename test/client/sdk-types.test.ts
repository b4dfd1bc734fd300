import {
  type ApiError,
  type AudienceClient,
  type components,
  createAudienceClient,
  type ProblemCode,
} from "@audience-service/client";
import { describe, expectTypeOf, it } from "vitest";

// Type-level tests, checked by `npm run typecheck` (tsc over test/): every `@ts-expect-error`
// line must fail to compile, or tsc reports the directive as unused. Each wrong call differs from
// a valid one in exactly one place. The functions are never called.

type Schemas = components["schemas"];
const workspaceId = "ws_1";
const audienceId = "aud_1";
const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const AUDIENCE_MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";
const MEMBERS = "/v0/workspaces/{workspaceId}/members";

// One wrong call per line, each short enough for the formatter to keep on that line.
function wrongPaths(api: AudienceClient) {
  const params = { path: { workspaceId } };
  // @ts-expect-error a path the contract does not have
  api.GET("/v0/workspaces/{workspaceId}/audience", { params });
  // @ts-expect-error a real path with a method it does not have
  api.PUT(AUDIENCES, { params, body: { name: "A" } });
  // @ts-expect-error a concrete URL instead of the path template
  api.GET(`/v0/workspaces/${workspaceId}/audiences`);
  // @ts-expect-error the iterator only takes paginated listings
  api.members(AUDIENCES, { params });
}

function wrongParameters(api: AudienceClient) {
  // @ts-expect-error a missing path parameter
  api.GET(AUDIENCE, { params: { path: { workspaceId } } });
  // @ts-expect-error a misspelt path parameter
  api.GET(AUDIENCE, { params: { path: { workspaceId, audienceID: audienceId } } });
  // @ts-expect-error a path operation called without its parameters at all
  api.GET(AUDIENCES);
  const path = { workspaceId, audienceId };
  // @ts-expect-error a query parameter of the wrong type
  api.GET(AUDIENCE_MEMBERS, { params: { path, query: { limit: "10" } } });
  // @ts-expect-error a misspelt query parameter
  api.GET(AUDIENCE_MEMBERS, { params: { path, query: { limt: 10 } } });
  // @ts-expect-error a value outside an enum
  api.GET(AUDIENCES, { params: { path: { workspaceId }, query: { sortDirection: "UP" } } });
}

function wrongBodies(api: AudienceClient) {
  const params = { path: { workspaceId } };
  // @ts-expect-error a missing required body
  api.POST(AUDIENCES, { params });
  // @ts-expect-error a misspelt body property
  api.POST(AUDIENCES, { params, body: { nam: "Readers" } });
  // @ts-expect-error a body property of the wrong type
  api.POST(AUDIENCES, { params, body: { name: 42 } });
  // @ts-expect-error a body on an operation that takes none
  api.GET(AUDIENCES, { params, body: { name: "Readers" } });
  // @ts-expect-error a nested body property of the wrong type
  api.POST(MEMBERS, { params, body: { members: [{ id: "m1", fields: { age: 42 } }] } });
}

describe("the SDK's types", () => {
  const api = createAudienceClient({ baseUrl: "http://127.0.0.1:1", apiKey: "ak_x" });
  const path = { workspaceId, audienceId };

  it("reject wrong paths, parameters and bodies at compile time (see the @ts-expect-error lines)", () => {
    expectTypeOf(wrongPaths).parameter(0).toEqualTypeOf<AudienceClient>();
    expectTypeOf(wrongParameters).parameter(0).toEqualTypeOf<AudienceClient>();
    expectTypeOf(wrongBodies).parameter(0).toEqualTypeOf<AudienceClient>();
  });

  it("type each result from the contract's success response", () => {
    const get = () => api.GET(AUDIENCE, { params: { path } });
    expectTypeOf(get).returns.resolves.toEqualTypeOf<Schemas["Audience"]>();
    const create = () => api.POST(AUDIENCES, { params: { path: { workspaceId } }, body: { name: "A" } });
    expectTypeOf(create).returns.resolves.toEqualTypeOf<Schemas["AudienceRef"]>();
    const archive = () => api.DELETE(AUDIENCE, { params: { path } });
    expectTypeOf(archive).returns.resolves.toEqualTypeOf<undefined>();
    const list = () => api.GET("/v0/workspaces");
    expectTypeOf(list).returns.resolves.toEqualTypeOf<Schemas["WorkspaceList"]>();
  });

  it("type the iterators' pages and members", () => {
    const members = () => api.members(AUDIENCE_MEMBERS, { params: { path } });
    expectTypeOf(members).returns.toEqualTypeOf<AsyncGenerator<Schemas["Member"], void, undefined>>();
    const pages = () => api.pages(MEMBERS, { params: { path: { workspaceId } } });
    expectTypeOf(pages).returns.toEqualTypeOf<AsyncGenerator<Schemas["MemberPage"], void, undefined>>();
  });

  it("type the error's problem code as the contract's enum", () => {
    expectTypeOf<ApiError["code"]>().toEqualTypeOf<ProblemCode | undefined>();
    expectTypeOf<ApiError["problem"]>().toEqualTypeOf<Schemas["Problem"] | undefined>();
    expectTypeOf<"audience_name_taken">().toMatchTypeOf<ProblemCode>();
    expectTypeOf<"name_taken">().not.toMatchTypeOf<ProblemCode>();
  });
});
