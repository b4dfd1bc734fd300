import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { addMembers, allMemberIds, createAudience, type TestWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";

const listed = async (ws: TestWorkspace, includeArchived = false) =>
  (await ws.api.GET(AUDIENCES, { params: { path: { workspaceId: ws.id }, query: { includeArchived } } })).results;
const listedIds = async (ws: TestWorkspace) => (await listed(ws)).map((a) => a.id);
const archive = (ws: TestWorkspace, audienceId: string) =>
  ws.api.DELETE(AUDIENCE, { params: { path: { workspaceId: ws.id, audienceId } } });
const restore = (ws: TestWorkspace, audienceId: string) =>
  ws.api.POST(`${AUDIENCE}/restore`, { params: { path: { workspaceId: ws.id, audienceId } } });

describe("archiveAudience", () => {
  it("answers 204 with no body, twice, and hides the audience from the default listing", async ({ ws }) => {
    const id = await createAudience(ws);
    const first = await ws.api.raw.DELETE(AUDIENCE, { params: { path: { workspaceId: ws.id, audienceId: id } } });
    expect(first.response.status).toBe(204);
    expect(first.data).toBeUndefined();
    expect(await archive(ws, id)).toBeUndefined();
    expect(await listedIds(ws)).not.toContain(id);
    expect((await listed(ws, true)).find((a) => a.id === id)).toMatchObject({ id, isArchived: true });
  });

  it("keeps the members and makes the audience read-only", async ({ ws, workspaceId, api }) => {
    const id = await createAudience(ws, "Summer list");
    const other = await createAudience(ws);
    await addMembers(ws, id, { memberIds: ["a1", "a2"] });
    await archive(ws, id);

    expect((await allMemberIds(ws, id)).sort()).toEqual(["a1", "a2"]);
    const path = { workspaceId, audienceId: id };
    const attempts = [
      await rejectionOf(addMembers(ws, id, { memberIds: ["a3"] })),
      await rejectionOf(api.DELETE(`${AUDIENCE}/members`, { params: { path }, body: { memberIds: ["a1"] } })),
      await rejectionOf(
        api.POST(`${AUDIENCES}/merge`, {
          params: { path: { workspaceId } },
          body: { name: "Merged", audienceIds: [id, other] },
        }),
      ),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(409);
      expect(attempt.code).toBe("audience_archived");
      // Named as a person knows it, with the id a program reads.
      expect(attempt.problem?.detail).toBe(
        `Audience "Summer list" (${id}) is archived and cannot be changed; restore it first.`,
      );
    }
    expect((await allMemberIds(ws, id)).sort()).toEqual(["a1", "a2"]);
  });

  it("frees the name for a new audience", async ({ ws }) => {
    const id = await createAudience(ws, "Seasonal");
    await archive(ws, id);
    await expect(createAudience(ws, "seasonal")).resolves.toMatch(/^aud_/);
  });

  it("answers 404 for an unknown audience", async ({ ws }) => {
    const error = await rejectionOf(archive(ws, "aud_unknown"));
    expect(error.status).toBe(404);
    expect(error.code).toBe("audience_not_found");
  });
});

describe("restoreAudience", () => {
  it("brings an archived audience back with its members", async ({ ws }) => {
    const id = await createAudience(ws, "Comeback");
    await addMembers(ws, id, { memberIds: ["r1"] });
    await archive(ws, id);
    expect(await restore(ws, id)).toEqual({ id, name: "Comeback" });
    expect(await listedIds(ws)).toContain(id);
    await addMembers(ws, id, { memberIds: ["r2"] });
    expect((await allMemberIds(ws, id)).sort()).toEqual(["r1", "r2"]);
  });

  it("answers 409 audience_name_taken when its name was reused meanwhile, and stays archived", async ({ ws }) => {
    const id = await createAudience(ws, "Reused");
    await archive(ws, id);
    await createAudience(ws, "REUSED");
    const error = await rejectionOf(restore(ws, id));
    expect(error.status).toBe(409);
    expect(error.code).toBe("audience_name_taken");
    expect(await listedIds(ws)).not.toContain(id);
  });

  it("changes nothing for an unarchived audience", async ({ ws }) => {
    const id = await createAudience(ws, "Active");
    expect(await restore(ws, id)).toEqual({ id, name: "Active" });
  });

  it("answers 409 audience_archived when its rule names an archived audience, until that one is restored", async ({
    ws,
  }) => {
    const named = await createAudience(ws, "Trial users");
    const naming = await createAudience(ws);
    await addMembers(ws, named, { memberIds: ["n1"] });
    await ws.api.PUT(`${AUDIENCE}/filter`, {
      params: { path: { workspaceId: ws.id, audienceId: naming } },
      body: { filter: { field: "audience", op: "in", value: named } },
    });
    await archive(ws, naming);
    await archive(ws, named);
    const error = await rejectionOf(restore(ws, naming));
    expect(error.status).toBe(409);
    expect(error.code).toBe("audience_archived");
    expect(error.problem?.audienceIds).toEqual([named]);
    expect(error.problem?.detail).toBe(
      `The rule of this audience names audience "Trial users" (${named}), which is archived; restore it first.`,
    );
    expect(await listedIds(ws)).not.toContain(naming);
    await restore(ws, named);
    expect(await restore(ws, naming)).toMatchObject({ id: naming });
    expect(await allMemberIds(ws, naming)).toEqual(["n1"]);
  });
});
