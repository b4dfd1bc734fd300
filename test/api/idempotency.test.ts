import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMembers, allMemberIds, createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { ADMIN_TOKEN, call, type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let ws: TestWorkspace;

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
});
afterAll(() => server.close());

const withKey = (key: string) => ({ "idempotency-key": key });
const audienceNames = async () =>
  (await ws.call("GET", "/audiences?includeArchived=true")).body.results.map((a: { name: string }) => a.name);

describe("Idempotency-Key", () => {
  it("replays the first response of a retried POST without executing it again", async () => {
    const send = () => ws.call("POST", "/audiences", { body: { name: "Once" }, headers: withKey("k-once") });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect((await audienceNames()).filter((n: string) => n === "Once")).toHaveLength(1);
  });

  it("replays a refusal too: the result of executing, not a fresh attempt", async () => {
    await createAudience(ws, "Taken once");
    const send = () => ws.call("POST", "/audiences", { body: { name: "taken ONCE" }, headers: withKey("k-409") });
    expect((await send()).body.code).toBe("audience_name_taken");
    const again = await send();
    expect(again.status).toBe(409);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("refuses the same key with a different body: 422 idempotency_key_reused, nothing executed", async () => {
    await ws.call("POST", "/audiences", { body: { name: "First body" }, headers: withKey("k-reuse") });
    const other = await ws.call("POST", "/audiences", { body: { name: "Second body" }, headers: withKey("k-reuse") });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_key_reused");
    expect(await audienceNames()).not.toContain("Second body");
  });

  it("gives concurrent duplicates the one result of the first", async () => {
    const audience = await createAudience(ws);
    const body = { memberIds: Array.from({ length: 2000 }, (_, i) => `dup-${i}`) };
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        ws.call("POST", `/audiences/${audience}/members`, { body, headers: withKey("k-dup") }),
      ),
    );
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ added: 2000, alreadyMembers: 0, created: 2000, merged: 0 });
    }
    expect(responses.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(4);
    expect(await allMemberIds(ws, audience)).toHaveLength(2000);
  });

  it("keeps nothing for a request refused by validation, so the key can be used for the corrected one", async () => {
    const bad = await ws.call("POST", "/audiences", { body: { name: "" }, headers: withKey("k-fixed") });
    expect(bad.status).toBe(400);
    const good = await ws.call("POST", "/audiences", { body: { name: "Corrected" }, headers: withKey("k-fixed") });
    expect(good.status).toBe(201);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
  });

  it("is scoped per API key and per admin token", async () => {
    const other = await createWorkspace(server);
    const audience = await createAudience(ws);
    await addMembers(ws, audience, { memberIds: ["s1"] });
    const mine = await ws.call("POST", "/audiences", { body: { name: "Scoped" }, headers: withKey("k-scope") });
    const theirs = await other.call("POST", "/audiences", { body: { name: "Scoped" }, headers: withKey("k-scope") });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    const admin = () =>
      call(server, "POST", "/v0/workspaces", {
        token: ADMIN_TOKEN,
        body: { name: "Idempotent ws" },
        headers: withKey("k-admin"),
      });
    const [a, b] = [await admin(), await admin()];
    expect(b.body).toEqual(a.body);
  });

  it("must be 1 to 255 visible ASCII characters", async () => {
    const response = await ws.call("POST", "/audiences", {
      body: { name: "Bad key" },
      headers: withKey("x".repeat(256)),
    });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].pointer).toBe("/headers/idempotency-key");
  });
});
