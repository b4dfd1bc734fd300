import { ApiError } from "@audience-service/client";
import { describe, expect } from "vitest";
import { checkedClient, notCalled, operationsTagged, rejectionOf } from "../support/checked-client.ts";
import type { TestWorkspace } from "../support/factories.ts";
import { it, test } from "../support/fixture.ts";

// Every Admin, Audiences and Audience members operation, called through the SDK on a live server;
// sdk-members.test.ts does the same for the other tags. Every response is checked against the contract.
const TAGS = ["Admin", "Audiences", "Audience members"];

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const MEMBERS = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/members";

const create = async ({ api, id: workspaceId }: TestWorkspace, name: string) =>
  (await api.POST(AUDIENCES, { params: { path: { workspaceId } }, body: { name } })).id;

describe("the SDK's admin operations", () => {
  it("create and list workspaces, and create API keys that work", async ({ server, admin }) => {
    const { id: workspaceId } = await admin.POST("/v0/workspaces", { body: { name: "SDK workspace" } });
    const { key } = await admin.POST("/v0/workspaces/{workspaceId}/api-keys", {
      params: { path: { workspaceId } },
      body: { name: "sdk-tests" },
    });
    const { results } = await admin.GET("/v0/workspaces");
    expect(results).toContainEqual(expect.objectContaining({ id: workspaceId, name: "SDK workspace" }));
    expect(key).toMatch(new RegExp(`^ak_${workspaceId.slice(3)}_`));
    const api = checkedClient(server.baseUrl, key);
    await expect(api.GET(AUDIENCES, { params: { path: { workspaceId } } })).resolves.toEqual({ results: [] });
  });

  it("revoke an API key: the next call rejects with 401 unauthorized", async ({ server, admin, ws }) => {
    const workspaceId = ws.id;
    const other = await admin.POST("/v0/workspaces/{workspaceId}/api-keys", { params: { path: { workspaceId } } });
    expect(other.name).toBe("default");
    const revoked = checkedClient(server.baseUrl, other.key);
    await revoked.GET(AUDIENCES, { params: { path: { workspaceId } } });
    const result = await admin.DELETE("/v0/workspaces/{workspaceId}/api-keys/{keyId}", {
      params: { path: { workspaceId, keyId: other.id } },
    });
    expect(result).toBeUndefined();
    const error = await rejectionOf(revoked.GET(AUDIENCES, { params: { path: { workspaceId } } }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: "unauthorized", problem: { status: 401, title: "Unauthorized" } });
    expect(ws.keyId).not.toBe(other.id);
  });
});

describe("the SDK's audience operations", () => {
  it("create, read, rename, list, archive and restore an audience", async ({ ws, api, workspaceId }) => {
    const id = await create(ws, "Weekly digest readers");
    const path = { workspaceId, audienceId: id };
    expect(await api.GET(AUDIENCE, { params: { path } })).toEqual({ id, name: "Weekly digest readers" });
    expect(await api.PATCH(AUDIENCE, { params: { path }, body: { name: "Monthly digest readers" } })).toEqual({
      id,
      name: "Monthly digest readers",
    });
    const listed = await api.GET(AUDIENCES, { params: { path: { workspaceId }, query: { search: "monthly" } } });
    expect(listed.results).toEqual([
      { id, name: "Monthly digest readers", isArchived: false, createdAt: expect.any(String) },
    ]);

    expect(await api.DELETE(AUDIENCE, { params: { path } })).toBeUndefined();
    const afterArchive = await api.GET(AUDIENCES, { params: { path: { workspaceId }, query: { search: "monthly" } } });
    expect(afterArchive.results).toEqual([]);
    const archived = await api.GET(AUDIENCES, {
      params: { path: { workspaceId }, query: { search: "monthly", includeArchived: true } },
    });
    expect(archived.results.map((a) => [a.id, a.isArchived])).toEqual([[id, true]]);

    expect(await api.POST(`${AUDIENCE}/restore`, { params: { path } })).toEqual({ id, name: "Monthly digest readers" });
  });

  it("reject with an ApiError carrying the problem document", async ({ ws }) => {
    await create(ws, "Beta testers");
    const error = await rejectionOf(create(ws, "BETA TESTERS"));
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.status).toBe(409);
    expect(apiError.code).toBe("audience_name_taken");
    expect(apiError.problem).toMatchObject({
      type: "urn:problem-type:audience-service:audience_name_taken",
      title: "Audience name taken",
      status: 409,
      code: "audience_name_taken",
      detail: 'An audience named "BETA TESTERS" already exists in this workspace.',
      requestId: expect.stringMatching(/^req_/),
    });
    expect(apiError.message).toBe(`409 audience_name_taken: ${apiError.problem?.detail}`);
    expect(apiError.response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("merge two audiences into a new one", async ({ ws, api, workspaceId }) => {
    const [a, b] = [await create(ws, "Merge source A"), await create(ws, "Merge source B")];
    await api.POST(MEMBERS, { params: { path: { workspaceId, audienceId: a } }, body: { memberIds: ["m1", "m2"] } });
    await api.POST(MEMBERS, { params: { path: { workspaceId, audienceId: b } }, body: { memberIds: ["m2", "m3"] } });
    const merged = await api.POST(`${AUDIENCES}/merge`, {
      params: { path: { workspaceId } },
      body: { name: "Merged", audienceIds: [a, b] },
    });
    const ids = [];
    for await (const member of api.members(MEMBERS, { params: { path: { workspaceId, audienceId: merged.id } } })) {
      ids.push(member.id);
    }
    expect(ids.sort()).toEqual(["m1", "m2", "m3"]);
    const snapshot = await api.POST(`${AUDIENCES}/{audienceId}/snapshot`, {
      params: { path: { workspaceId, audienceId: merged.id } },
      body: { name: "Merged, as it was" },
    });
    const copy = await api.GET(`${AUDIENCES}/{audienceId}`, {
      params: { path: { workspaceId, audienceId: snapshot.id }, query: { include: "stats" } },
    });
    expect(copy).toMatchObject({ name: "Merged, as it was", memberCount: 3, hasRule: false });
  });
});

/** Every test of the page iterator starts with an audience of seven members. */
const paged = test.extend("paged", async ({ ws }) => {
  const { api, id: workspaceId } = ws;
  const audienceId = await create(ws, "Paged audience");
  const added = await api.POST(MEMBERS, {
    params: { path: { workspaceId, audienceId } },
    body: {
      memberIds: ["p1", "p2", "p3", "p4", "p5", "p6"],
      members: [{ id: "p7", email: "ada@example.com", fields: { firstName: "Ada" } }],
    },
  });
  expect(added).toEqual({ added: 7, alreadyMembers: 0, created: 7, merged: 0 });
  const all = await api.GET(MEMBERS, { params: { path: { workspaceId, audienceId }, query: { limit: 500 } } });
  const everyId = all.results.map((m) => m.id);
  expect(everyId).toHaveLength(7);
  return { audienceId, everyId };
});

describe("the SDK's member operations and page iterator", () => {
  paged(
    "walks every page forward, keeping limit and order",
    async ({ api, workspaceId, paged: { audienceId, everyId } }) => {
      const pages = [];
      for await (const page of api.pages(MEMBERS, {
        params: { path: { workspaceId, audienceId }, query: { limit: 3 } },
      })) {
        pages.push(page);
      }
      expect(pages.map((p) => p.results.length)).toEqual([3, 3, 1]);
      expect(pages.map((p) => p.totalCount)).toEqual([7, 7, 7]);
      expect(pages.flatMap((p) => p.results.map((m) => m.id))).toEqual(everyId);

      const ascending = [];
      const query = { limit: 2, sortDirection: "ASC" as const };
      for await (const member of api.members(MEMBERS, { params: { path: { workspaceId, audienceId }, query } })) {
        ascending.push(member.id);
      }
      expect(ascending).toEqual([...everyId].reverse());
    },
  );

  paged(
    "walks backward from a before cursor, and stops at once on an empty listing",
    async ({ ws, api, workspaceId, paged: { audienceId, everyId } }) => {
      const first = await api.GET(MEMBERS, { params: { path: { workspaceId, audienceId }, query: { limit: 2 } } });
      const tail = await api.GET(MEMBERS, {
        params: { path: { workspaceId, audienceId }, query: { limit: 5, after: first.pageInfo.endCursor } },
      });
      const before = tail.pageInfo.startCursor;
      const seen = [];
      for await (const page of api.pages(MEMBERS, {
        params: { path: { workspaceId, audienceId }, query: { limit: 1, before } },
      })) {
        seen.unshift(...page.results.map((m) => m.id));
      }
      expect(seen).toEqual(everyId.slice(0, 2));

      const empty = await create(ws, "Empty audience");
      const none = [];
      for await (const page of api.pages(MEMBERS, { params: { path: { workspaceId, audienceId: empty } } }))
        none.push(page);
      expect(none).toEqual([
        {
          totalCount: 0,
          pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: "", endCursor: "" },
          results: [],
        },
      ]);
    },
  );

  paged("removes members", async ({ api, workspaceId, paged: { audienceId } }) => {
    const result = await api.DELETE(MEMBERS, {
      params: { path: { workspaceId, audienceId } },
      body: { memberIds: ["p1", "nobody"] },
    });
    expect(result).toEqual({ removed: 1, notMembers: 1 });
  });
});

describe("coverage", () => {
  it(`called every ${TAGS.join(", ")} operation through the SDK`, () => {
    const expected = operationsTagged(TAGS);
    expect(expected.length).toBeGreaterThan(10);
    expect(notCalled(expected)).toEqual([]);
  });
});
