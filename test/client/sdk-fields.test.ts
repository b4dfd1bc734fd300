// The SDK for typed fields: declare, list and remove a field's type. Every response is checked
// against the contract. (Every error and every write path: test/api/fields.test.ts.)
import { describe, expect } from "vitest";
import { notCalled, operationsTagged, rejectionOf } from "../support/checked-client.ts";
import { it } from "../support/fixture.ts";

const TAGS = ["Fields"];
const FIELD = "/v0/workspaces/{workspaceId}/fields/{fieldKey}";

describe("typed fields through the SDK", () => {
  it("declares a field's type, lists it, removes it, and then has nothing to remove", async ({ api, workspaceId }) => {
    const path = { workspaceId, fieldKey: "lastOrder" };
    const declared = await api.PUT(FIELD, { params: { path }, body: { type: "date" } });
    expect(declared).toMatchObject({ key: "lastOrder", type: "date" });
    const { results } = await api.GET("/v0/workspaces/{workspaceId}/fields", { params: { path: { workspaceId } } });
    expect(results.find((field) => field.key === "lastOrder")).toEqual({
      ...declared,
      memberCount: 0,
      sampleValues: [],
    });
    await api.DELETE(FIELD, { params: { path } });
    const error = await rejectionOf(api.DELETE(FIELD, { params: { path } }));
    expect(error).toMatchObject({ status: 404, code: "field_not_found" });
  });
});

describe("coverage", () => {
  it(`called every ${TAGS.join(", ")} operation through the SDK`, () => {
    const expected = operationsTagged(TAGS);
    expect(expected.length).toBe(3);
    expect(notCalled(expected)).toEqual([]);
  });
});
