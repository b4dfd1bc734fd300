import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { addMembers, allMemberIds, createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { it } from "../support/fixture.ts";

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";

const withKey = (key: string) => ({ "idempotency-key": key });
/** createAudience with an Idempotency-Key, answering the whole response to read its headers. */
const create = (ws: TestWorkspace, name: string, key: string) =>
  ws.api.raw.POST(AUDIENCES, { params: { path: { workspaceId: ws.id } }, body: { name }, headers: withKey(key) });
const replayed = (answer: { response: Response }) => answer.response.headers.get("idempotent-replayed");
const audienceNames = async (ws: TestWorkspace) =>
  (
    await ws.api.GET(AUDIENCES, { params: { path: { workspaceId: ws.id }, query: { includeArchived: true } } })
  ).results.map((a) => a.name);

describe("Idempotency-Key", () => {
  it("replays the first response of a retried POST without executing it again", async ({ ws }) => {
    const first = await create(ws, "Once", "k-once");
    const again = await create(ws, "Once", "k-once");
    expect(first.response.status).toBe(201);
    expect(again.response.status).toBe(201);
    expect(again.data).toEqual(first.data);
    expect(replayed(again)).toBe("true");
    expect(replayed(first)).toBeNull();
    expect((await audienceNames(ws)).filter((n) => n === "Once")).toHaveLength(1);
  });

  it("replays a refusal too: the result of executing, not a fresh attempt", async ({ ws }) => {
    await createAudience(ws, "Taken once");
    expect((await create(ws, "taken ONCE", "k-409")).error?.code).toBe("audience_name_taken");
    const again = await create(ws, "taken ONCE", "k-409");
    expect(again.response.status).toBe(409);
    expect(replayed(again)).toBe("true");
  });

  it("refuses the same key with a different body: 422 idempotency_key_reused, nothing executed", async ({ ws }) => {
    await create(ws, "First body", "k-reuse");
    const other = await create(ws, "Second body", "k-reuse");
    expect(other.response.status).toBe(422);
    expect(other.error?.code).toBe("idempotency_key_reused");
    expect(await audienceNames(ws)).not.toContain("Second body");
  });

  it("gives concurrent duplicates the one result of the first", async ({ ws }) => {
    const audienceId = await createAudience(ws);
    const body = { memberIds: Array.from({ length: 2000 }, (_, i) => `dup-${i}`) };
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        ws.api.raw.POST(`${AUDIENCES}/{audienceId}/members`, {
          params: { path: { workspaceId: ws.id, audienceId } },
          body,
          headers: withKey("k-dup"),
        }),
      ),
    );
    for (const answer of answers) {
      expect(answer.response.status).toBe(200);
      expect(answer.data).toEqual({ added: 2000, alreadyMembers: 0, created: 2000, merged: 0 });
    }
    expect(answers.filter((a) => replayed(a) === "true")).toHaveLength(4);
    expect(await allMemberIds(ws, audienceId)).toHaveLength(2000);
  });

  it("keeps nothing for a request refused by validation, so the key can be used for the corrected one", async ({
    ws,
  }) => {
    const bad = await create(ws, "", "k-fixed");
    expect(bad.response.status).toBe(400);
    const good = await create(ws, "Corrected", "k-fixed");
    expect(good.response.status).toBe(201);
    expect(replayed(good)).toBeNull();
  });

  it("is scoped per API key and per admin token", async ({ ws, server, admin }) => {
    const other = await createWorkspace(server);
    const audienceId = await createAudience(ws);
    await addMembers(ws, audienceId, { memberIds: ["s1"] });
    const mine = await create(ws, "Scoped", "k-scope");
    const theirs = await create(other, "Scoped", "k-scope");
    expect(theirs.response.status).toBe(201);
    expect(theirs.data?.id).not.toBe(mine.data?.id);
    const createWorkspaceOnce = () =>
      admin.POST("/v0/workspaces", { body: { name: "Idempotent ws" }, headers: withKey("k-admin") });
    const [a, b] = [await createWorkspaceOnce(), await createWorkspaceOnce()];
    expect(b).toEqual(a);
  });

  it("must be 1 to 255 visible ASCII characters", async ({ ws }) => {
    const error = await rejectionOf(
      ws.api.POST(AUDIENCES, {
        params: { path: { workspaceId: ws.id } },
        body: { name: "Bad key" },
        headers: withKey("x".repeat(256)),
      }),
    );
    expect(error.status).toBe(400);
    expect(error.problem?.errors?.[0]?.pointer).toBe("/headers/idempotency-key");
  });
});
