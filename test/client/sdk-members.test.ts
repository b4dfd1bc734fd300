import { ApiError } from "@audience-service/client";
import { describe, expect } from "vitest";
import { notCalled, operationsTagged, rejectionOf } from "../support/checked-client.ts";
import { documentedOperations } from "../support/contract.ts";
import { test } from "../support/fixture.ts";

// Every Members and Audience rules operation, called through the SDK on a live server (the other
// tags are in sdk-audiences.test.ts, sdk-events.test.ts, sdk-imports.test.ts, sdk-fields.test.ts,
// sdk-insight.test.ts and sdk-activities.test.ts). Every response is checked against the contract.
const TAGS = ["Members", "Audience rules"];
// The probes (Operations) are covered in test/api/operations.test.ts; they take no credentials.
const COVERED_ELSEWHERE = [
  "Admin",
  "Audiences",
  "Audience members",
  "Operations",
  "Events",
  "Webhooks",
  "Imports and exports",
  "Fields",
  "Insight",
  "Activities",
];

const MEMBERS = "/v0/workspaces/{workspaceId}/members";
const MEMBER = "/v0/workspaces/{workspaceId}/members/{memberId}";
const FILTER = "/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter";

/** A client-chosen id that needs URL-encoding in a path. */
const adaId = "crm:42/ada lovelace";

/** Every test starts with two members, Ada (a client-chosen id) and Grace (an id the service gave). */
const it = test.extend("graceId", { auto: true }, async ({ api, workspaceId }) => {
  const { results } = await api.POST(MEMBERS, {
    params: { path: { workspaceId } },
    body: {
      members: [
        { id: adaId, email: "ada@acme.example", fields: { firstName: "Ada", company: "Acme" } },
        { email: "grace@navy.example", fields: { firstName: "Grace", company: "Navy" } },
      ],
    },
  });
  expect(results).toEqual([
    { id: adaId, status: "created" },
    { id: expect.any(String), status: "created" },
  ]);
  return results[1]?.id ?? "";
});

describe("the SDK's member operations", () => {
  it("read and update a member, whose id is URL-encoded in the path", async ({ api, workspaceId }) => {
    const path = { workspaceId, memberId: adaId };
    expect(await api.GET(MEMBER, { params: { path } })).toEqual({
      id: adaId,
      createdAt: expect.any(String),
      email: "ada@acme.example",
      fields: { firstName: "Ada", lastName: "", role: "", company: "Acme" },
      alternativeEmails: [],
    });
    const updated = await api.PATCH(MEMBER, { params: { path }, body: { fields: { role: "Engineer" } } });
    expect(updated.fields).toEqual({ firstName: "Ada", lastName: "", role: "Engineer", company: "Acme" });
  });

  it("list the workspace's members across pages", async ({ api, workspaceId, graceId }) => {
    const ids = [];
    for await (const member of api.members(MEMBERS, { params: { path: { workspaceId }, query: { limit: 1 } } })) {
      ids.push(member.id);
    }
    expect(ids.sort()).toEqual([adaId, graceId].sort());
  });

  it("reject an unknown member with a 404 member_not_found ApiError", async ({ api, workspaceId }) => {
    const error = await rejectionOf(api.GET(MEMBER, { params: { path: { workspaceId, memberId: "nobody" } } }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, code: "member_not_found", problem: { status: 404 } });
  });
});

describe("the SDK's audience rule operations", () => {
  it("preview a filter, set it on an audience, and follow it from the member's side", async ({ api, workspaceId }) => {
    const filter = { field: "fields.company", op: "eq", value: "acme" } as const;
    const preview = await api.POST("/v0/workspaces/{workspaceId}/audiences/preview", {
      params: { path: { workspaceId } },
      body: { filter, limit: 10 },
    });
    expect(preview.totalCount).toBe(1);
    expect(preview.results.map((m) => m.id)).toEqual([adaId]);

    const { id: audienceId } = await api.POST("/v0/workspaces/{workspaceId}/audiences", {
      params: { path: { workspaceId } },
      body: { name: "Acme people" },
    });
    const path = { workspaceId, audienceId };
    expect(await api.GET(FILTER, { params: { path } })).toEqual({ filter: null, memberCount: 0 });
    expect(await api.PUT(FILTER, { params: { path }, body: { filter } })).toEqual({ filter, memberCount: 1 });

    const inAudience = [];
    for await (const member of api.members(MEMBERS, { params: { path: { workspaceId }, query: { audienceId } } })) {
      inAudience.push(member.id);
    }
    expect(inAudience).toEqual([adaId]);

    const audiences = await api.GET(`${MEMBER}/audiences`, { params: { path: { workspaceId, memberId: adaId } } });
    expect(audiences.results).toEqual([{ id: audienceId, name: "Acme people", isArchived: false, reason: "rule" }]);
  });
});

describe("deleting members", () => {
  it("deletes members from the workspace and counts unknown ids", async ({ api, workspaceId, graceId }) => {
    const result = await api.DELETE(MEMBERS, {
      params: { path: { workspaceId } },
      body: { memberIds: [graceId, "nobody"] },
    });
    expect(result).toEqual({ deleted: 1, notFound: 1 });
    const error = await rejectionOf(api.GET(MEMBER, { params: { path: { workspaceId, memberId: graceId } } }));
    expect(error).toMatchObject({ status: 404, code: "member_not_found" });
  });
});

describe("coverage", () => {
  it(`called every ${TAGS.join(", ")} operation through the SDK`, () => {
    const expected = operationsTagged(TAGS);
    expect(expected.length).toBeGreaterThan(5);
    expect(notCalled(expected)).toEqual([]);
  });

  it("leaves no operation of the contract to another tag than the SDK test files cover", () => {
    const covered = operationsTagged([...TAGS, ...COVERED_ELSEWHERE]);
    const all = documentedOperations().map(({ method, path }) => `${method} ${path}`);
    expect(all.filter((operation) => !covered.includes(operation))).toEqual([]);
  });
});
