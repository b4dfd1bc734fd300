import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMembers, createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import { type LiveServer, startLiveServer } from "../support/live-server.ts";

let server: LiveServer;
let ws: TestWorkspace;
let audience: string;
/** Every member of `audience` in the default order (createdAt DESC, then id DESC in byte order). */
let expectedDesc: string[];

interface Page {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
  results: { id: string; createdAt: string; email: string | null }[];
}

const page = async (query: string, id = audience) => {
  const response = await ws.call<Page>("GET", `/audiences/${id}/members?${query}`);
  expect(response.status).toBe(200);
  return response.body;
};

beforeAll(async () => {
  server = await startLiveServer();
  ws = await createWorkspace(server);
  audience = await createAudience(ws);
  // Three batches: members of one batch share createdAt, so ids break the ties (byte order: "B" < "a").
  const batches = [
    ["a", "B", "c", "D", "e", "F", "g"],
    ["h", "I", "j", "K", "l", "M", "n", "O"],
    ["p", "Q", "r", "S", "t", "U", "v", "W", "x", "Y"],
  ];
  for (const batch of batches) {
    await addMembers(ws, audience, { memberIds: batch });
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await addMembers(ws, audience, {
    members: [{ id: "S", email: "searchable@example.com", fields: { firstName: "Zora", company: "Acme 50%" } }],
  });
  const sortBatch = (batch: string[]) => [...batch].sort((x, y) => Buffer.compare(Buffer.from(y), Buffer.from(x)));
  expectedDesc = [...batches].reverse().flatMap(sortBatch);
});
afterAll(() => server.close());

describe("listAudienceMembers", () => {
  it("answers the most recent members first, 30 by default, with the total", async () => {
    const first = await page("");
    expect(first.totalCount).toBe(25);
    expect(first.results.map((m) => m.id)).toEqual(expectedDesc);
    expect(first.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    const times = first.results.map((m) => m.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it("walks every member forward with after, with exact pageInfo on every page", async () => {
    const seen: string[] = [];
    let after = "";
    for (let n = 0; ; n++) {
      const current = await page(`limit=7${after ? `&after=${after}` : ""}`);
      expect(current.totalCount).toBe(25);
      seen.push(...current.results.map((m) => m.id));
      expect(current.pageInfo.hasPreviousPage).toBe(n > 0);
      expect(current.pageInfo.hasNextPage).toBe(seen.length < 25);
      if (!current.pageInfo.hasNextPage) break;
      after = current.pageInfo.endCursor;
    }
    expect(seen).toEqual(expectedDesc);
  });

  it("walks back with before from the last page", async () => {
    const last = await page(`limit=7&after=${(await page("limit=21")).pageInfo.endCursor}`);
    expect(last.results.map((m) => m.id)).toEqual(expectedDesc.slice(21));
    expect(last.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const seen = [...last.results.map((m) => m.id)];
    let before = last.pageInfo.startCursor;
    for (;;) {
      const current = await page(`limit=7&before=${before}`);
      seen.unshift(...current.results.map((m) => m.id));
      expect(current.pageInfo.hasNextPage).toBe(true);
      expect(current.pageInfo.hasPreviousPage).toBe(seen.length < 25);
      if (!current.pageInfo.hasPreviousPage) break;
      before = current.pageInfo.startCursor;
    }
    expect(seen).toEqual(expectedDesc);
  });

  it("orders oldest first with sortDirection=ASC", async () => {
    const ascending = await page("limit=500&sortDirection=ASC");
    expect(ascending.results.map((m) => m.id)).toEqual([...expectedDesc].reverse());
  });

  it("answers an empty page with empty cursors past the end, and knows what lies before it", async () => {
    const everything = await page("limit=25");
    const beyond = await page(`after=${everything.pageInfo.endCursor}`);
    expect(beyond.results).toEqual([]);
    expect(beyond.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true, startCursor: "", endCursor: "" });
    const empty = await page("", await createAudience(ws));
    expect(empty).toEqual({
      totalCount: 0,
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: "", endCursor: "" },
      results: [],
    });
  });

  it("keeps its place when the member at the cursor leaves the audience", async () => {
    const other = await createAudience(ws);
    await addMembers(ws, other, { memberIds: ["p1", "p2", "p3", "p4"] });
    const first = await page("limit=2&sortDirection=ASC", other);
    await ws.call("DELETE", `/audiences/${other}/members`, { body: { memberIds: [first.results[1]?.id] } });
    const next = await page(`limit=2&sortDirection=ASC&after=${first.pageInfo.endCursor}`, other);
    expect(next.results.map((m) => m.id)).toEqual(["p3", "p4"]);
    expect(next.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  it("filters by a case-insensitive search over e-mail and named fields, counting matches", async () => {
    for (const term of ["SEARCHABLE@", "zora", "acme 50%"]) {
      const found = await page(`search=${encodeURIComponent(term)}`);
      expect(found.totalCount).toBe(1);
      expect(found.results.map((m) => m.id)).toEqual(["S"]);
    }
    const none = await page("search=nobody");
    expect(none.totalCount).toBe(0);
    expect(none.results).toEqual([]);
  });

  it.each([
    ["limit=0", "/query/limit"],
    ["limit=501", "/query/limit"],
    ["limit=ten", "/query/limit"],
    ["sortDirection=desc", "/query/sortDirection"],
  ])("answers 400 invalid_request for %s", async (query, pointer) => {
    const response = await ws.call("GET", `/audiences/${audience}/members?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("invalid_request");
    expect(response.body.errors[0].pointer).toBe(pointer);
  });

  it("answers 400 invalid_cursor for a malformed cursor or another audience's cursor", async () => {
    const other = await createAudience(ws);
    await addMembers(ws, other, { memberIds: ["o1", "o2"] });
    const foreign = (await page("limit=1", other)).pageInfo.endCursor;
    for (const query of ["after=garbage!", `after=${foreign}`, `before=${foreign}`, "before=eyJ4IjoxfQ"]) {
      const response = await ws.call("GET", `/audiences/${audience}/members?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe("invalid_cursor");
    }
  });

  it("answers 400 when both after and before are sent", async () => {
    const cursor = (await page("limit=1")).pageInfo.endCursor;
    const response = await ws.call("GET", `/audiences/${audience}/members?after=${cursor}&before=${cursor}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("invalid_request");
  });

  it("answers 404 for an unknown audience", async () => {
    const response = await ws.call("GET", "/audiences/aud_none/members");
    expect(response.status).toBe(404);
    expect(response.body.code).toBe("audience_not_found");
  });
});
