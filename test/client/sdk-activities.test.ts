import { ApiError, type AudienceClient } from "@audience-service/client";
import { describe, expect } from "vitest";
import { notCalled, operationsTagged, rejectionOf } from "../support/checked-client.ts";
import { it } from "../support/fixture.ts";

// Every Activities operation through the SDK; its track(): one activity or many, typed by the
// contract's ActivityInput.
const TAGS = ["Activities"];

describe("the SDK's track()", () => {
  it("records one activity, or many, and a retried id is counted as a duplicate", async ({ api, workspaceId }) => {
    expect(await api.track(workspaceId, { id: "s1", memberId: "ada", type: "session.attended" })).toEqual({
      accepted: 1,
      duplicates: 0,
      expired: 0,
      createdMembers: 1,
    });
    const many = [
      { id: "s1", memberId: "ada", type: "session.attended" },
      { id: "o1", email: "grace@example.com", type: "order.placed", properties: { amount: 59.9, gift: false } },
    ];
    expect(await api.track(workspaceId, many, { idempotencyKey: "batch-1" })).toEqual({
      accepted: 1,
      duplicates: 1,
      expired: 0,
      createdMembers: 1,
    });
    const timeline = await api.GET("/v0/workspaces/{workspaceId}/members/{memberId}/activities", {
      params: { path: { workspaceId, memberId: "ada" } },
    });
    expect(timeline.results.map((a) => a.id)).toEqual(["s1"]);
  });

  it("throws an ApiError pointing at a bad entry, and stores nothing", async ({ api, workspaceId }) => {
    const ahead = new Date(Date.now() + 3_600_000).toISOString();
    const error = await rejectionOf(
      api.track(workspaceId, [
        { memberId: "ada", type: "session.attended" },
        { memberId: "ada", type: "session.attended", occurredAt: ahead },
      ]),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe("invalid_activity");
    expect(error.problem?.errors?.[0]?.pointer).toBe("/body/activities/1/occurredAt");
    const types = await api.GET("/v0/workspaces/{workspaceId}/activity-types", { params: { path: { workspaceId } } });
    expect(types.results).toEqual([]);
  });

  it("is typed by the contract: a property that is not a string, number or boolean does not compile", () => {
    const typed: Parameters<AudienceClient["track"]>[1] = { memberId: "ada", type: "t", properties: { amount: 1 } };
    // @ts-expect-error: a nested object is not a property value
    const nested: Parameters<AudienceClient["track"]>[1] = { memberId: "ada", type: "t", properties: { a: { b: 1 } } };
    expect([typed, nested]).toHaveLength(2);
  });
});

describe("coverage", () => {
  it(`called every ${TAGS.join(", ")} operation through the SDK`, () => {
    const expected = operationsTagged(TAGS);
    expect(expected.length).toBe(3);
    expect(notCalled(expected)).toEqual([]);
  });
});
