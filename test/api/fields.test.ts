import { describe, expect } from "vitest";
import { rejectionOf } from "../support/checked-client.ts";
import { createAudience, type MemberInput, type TestWorkspace, upsertMembers } from "../support/factories.ts";
import { it } from "../support/fixture.ts";
import { csvOf, importCsv } from "../support/imports.ts";

const FIELDS = "/v0/workspaces/{workspaceId}/fields";
const FIELD = "/v0/workspaces/{workspaceId}/fields/{fieldKey}";
const MEMBER = "/v0/workspaces/{workspaceId}/members/{memberId}";
type FieldType = "string" | "number" | "date" | "boolean";

const declare = (ws: TestWorkspace, fieldKey: string, type: FieldType) =>
  ws.api.PUT(FIELD, { params: { path: { workspaceId: ws.id, fieldKey } }, body: { type } });
const undeclare = (ws: TestWorkspace, fieldKey: string) =>
  ws.api.DELETE(FIELD, { params: { path: { workspaceId: ws.id, fieldKey } } });
const catalogue = async (ws: TestWorkspace) =>
  (await ws.api.GET(FIELDS, { params: { path: { workspaceId: ws.id } } })).results;
/** The catalogue's declared fields, as declareField answers them. */
const listFields = async (ws: TestWorkspace) =>
  (await catalogue(ws)).flatMap(({ key, type, createdAt }) => (createdAt === null ? [] : [{ key, type, createdAt }]));
const setRule = (ws: TestWorkspace, audienceId: string, key: string) =>
  ws.api.PUT("/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
    params: { path: { workspaceId: ws.id, audienceId } },
    body: { filter: { field: `fields.${key}`, op: "eq", value: "1" } },
  });
const getMember = (ws: TestWorkspace, memberId: string) =>
  ws.api.GET(MEMBER, { params: { path: { workspaceId: ws.id, memberId } } });
const withScore = (id: string, score: string) => ({ id, fields: { score } }) satisfies MemberInput;

describe("declaring, listing and removing field types", () => {
  it("declares a type, lists it, and removes it again", async ({ ws }) => {
    expect(await listFields(ws)).toEqual([]);
    const score = await declare(ws, "score", "number");
    expect(score).toEqual({ key: "score", type: "number", createdAt: expect.any(String) });
    const lastOrder = await declare(ws, "lastOrder", "date");
    expect(await listFields(ws)).toEqual([lastOrder, score]);
    // The same type again changes nothing, not even when it was declared.
    expect(await declare(ws, "score", "number")).toEqual(score);
    expect(await undeclare(ws, "score")).toBeUndefined();
    expect(await listFields(ws)).toEqual([lastOrder]);
  });

  it("keeps the values when a field goes back to string, which lists no declaration", async ({ ws }) => {
    await declare(ws, "vip", "boolean");
    await upsertMembers(ws, [{ id: "m1", fields: { vip: "TRUE" } }]);
    expect(await declare(ws, "vip", "string")).toEqual({ key: "vip", type: "string", createdAt: expect.any(String) });
    expect(await listFields(ws)).toEqual([]);
    expect((await getMember(ws, "m1")).fields.vip).toBe("TRUE");
    await upsertMembers(ws, [{ id: "m1", fields: { vip: "maybe" } }]);
    expect((await getMember(ws, "m1")).fields.vip).toBe("maybe");
  });

  it("changes a type when every stored value parses as the new one", async ({ ws }) => {
    await upsertMembers(ws, [withScore("m1", "1"), withScore("m2", "")]);
    await declare(ws, "score", "number");
    const changed = await declare(ws, "score", "string");
    expect(changed.type).toBe("string");
    expect((await declare(ws, "score", "number")).type).toBe("number");
  });

  it.for(["firstName", "lastName", "role", "company"])(
    "refuses to type the named field %s: 400",
    async (key, { ws }) => {
      const error = await rejectionOf(declare(ws, key, "number"));
      expect([error.status, error.code]).toEqual([400, "invalid_request"]);
      expect(error.problem?.errors).toEqual([{ pointer: "/params/fieldKey", message: expect.any(String) }]);
    },
  );

  it("answers 404 field_not_found when removing a field with no declared type", async ({ ws }) => {
    await upsertMembers(ws, [withScore("m1", "1")]);
    const error = await rejectionOf(undeclare(ws, "score"));
    expect([error.status, error.code]).toEqual([404, "field_not_found"]);
  });
});

describe("the field catalogue", () => {
  it("lists the named fields on an empty workspace, with no member holding them", async ({ ws }) => {
    expect(await catalogue(ws)).toEqual(
      ["company", "firstName", "lastName", "role"].map((key) => ({
        key,
        type: "string",
        createdAt: null,
        memberCount: 0,
        sampleValues: [],
      })),
    );
  });

  it("lists every field members hold, with its type, how many hold it and its smallest values", async ({ ws }) => {
    await upsertMembers(ws, [
      { id: "m1", email: "ada@example.com", fields: { plan: "pro", score: "42", company: "Acme" } },
      { id: "m2", fields: { plan: "free", score: "7", Zone: "eu" } },
      { id: "m3", fields: { plan: "pro", score: "" } },
      { id: "m4", fields: { plan: "basic" } },
      { id: "m5", fields: { plan: "Team" } },
    ]);
    const lastOrder = await declare(ws, "lastOrder", "date");
    const score = await declare(ws, "score", "number");
    const byKey = Object.fromEntries((await catalogue(ws)).map((field) => [field.key, field]));
    expect(Object.keys(byKey)).toEqual([
      "Zone",
      "company",
      "firstName",
      "lastName",
      "lastOrder",
      "plan",
      "role",
      "score",
    ]);
    expect(byKey.plan).toEqual({
      key: "plan",
      type: "string",
      createdAt: null,
      memberCount: 5,
      sampleValues: ["Team", "basic", "free"],
    });
    expect(byKey.score).toEqual({ ...score, memberCount: 2, sampleValues: ["42", "7"] });
    expect(byKey.lastOrder).toEqual({ ...lastOrder, memberCount: 0, sampleValues: [] });
    expect(byKey.company).toMatchObject({ memberCount: 1, sampleValues: ["Acme"] });
    expect(byKey.firstName).toMatchObject({ memberCount: 0, sampleValues: [] });
  });

  it("follows the members: a value cleared or a member deleted is no longer counted", async ({ ws }) => {
    await upsertMembers(ws, [
      { id: "m1", fields: { plan: "pro" } },
      { id: "m2", fields: { plan: "free" } },
    ]);
    await ws.api.PATCH(MEMBER, {
      params: { path: { workspaceId: ws.id, memberId: "m1" } },
      body: { fields: { plan: null } },
    });
    await ws.api.DELETE("/v0/workspaces/{workspaceId}/members", {
      params: { path: { workspaceId: ws.id } },
      body: { memberIds: ["m2"] },
    });
    expect((await catalogue(ws)).map((field) => field.key)).toEqual(["company", "firstName", "lastName", "role"]);
  });
});

describe("declaring over stored values", () => {
  it("answers 409 field_values_invalid with how many and the first 10, and changes nothing", async ({ ws }) => {
    const bad = Array.from({ length: 12 }, (_, i) => withScore(`bad${String(i).padStart(2, "0")}`, `n/a ${i}`));
    await upsertMembers(ws, [withScore("good", "42"), withScore("empty", ""), ...bad]);
    const error = await rejectionOf(declare(ws, "score", "number"));
    expect([error.status, error.code]).toEqual([409, "field_values_invalid"]);
    expect(error.problem?.count).toBe(12);
    expect(error.problem?.memberIds).toEqual(bad.slice(0, 10).map((m) => m.id));
    expect(error.problem?.misfits).toEqual(
      bad.slice(0, 10).map((m) => ({ memberId: m.id, email: null, value: m.fields.score })),
    );
    expect(await listFields(ws)).toEqual([]);
    // Nothing is checked: the field is still a string.
    await upsertMembers(ws, [withScore("good", "still text")]);
  });

  it("counts the bad values beyond the first page it reads", async ({ ws }) => {
    const many = Array.from({ length: 5_003 }, (_, i) => withScore(`m${String(i).padStart(5, "0")}`, `x${i}`));
    await upsertMembers(ws, many);
    const error = await rejectionOf(declare(ws, "score", "boolean"));
    expect([error.code, error.problem?.count]).toEqual(["field_values_invalid", 5_003]);
    expect(error.problem?.memberIds).toEqual(many.slice(0, 10).map((m) => m.id));
  });

  it.for([
    ["number", ["42", "-3.5", "1e3", "+.5"], "1,5"],
    ["date", ["2026-01-31", "2026-01-31T09:00:00Z", "2026-01-31t09:00+02:00"], "2026-02-30"],
    ["boolean", ["true", "FALSE", "True"], "yes"],
  ] as const)("checks each value as a %s", async ([type, good, bad], { ws }) => {
    await upsertMembers(
      ws,
      good.map((value, i) => withScore(`g${i}`, value)),
    );
    expect((await declare(ws, "score", type)).type).toBe(type);
    await undeclare(ws, "score");
    await upsertMembers(ws, [withScore("b", bad)]);
    const error = await rejectionOf(declare(ws, "score", type));
    expect([error.code, error.problem?.count, error.problem?.memberIds]).toEqual(["field_values_invalid", 1, ["b"]]);
  });
});

describe("a field a rule uses", () => {
  it("cannot change type or lose it: 409 field_in_use naming the audiences, archived ones too", async ({ ws }) => {
    await declare(ws, "score", "number");
    const [a, b, other] = [await createAudience(ws, "High"), await createAudience(ws, "Old"), await createAudience(ws)];
    const named = a < b ? `"High" (${a}), "Old" (${b})` : `"Old" (${b}), "High" (${a})`;
    await setRule(ws, b, "score");
    await setRule(ws, a, "score");
    await setRule(ws, other, "tier");
    await ws.api.DELETE("/v0/workspaces/{workspaceId}/audiences/{audienceId}", {
      params: { path: { workspaceId: ws.id, audienceId: b } },
    });
    const attempts = [
      () => declare(ws, "score", "date"),
      () => declare(ws, "score", "string"),
      () => undeclare(ws, "score"),
    ];
    for (const attempt of attempts) {
      const error = await rejectionOf(attempt());
      expect([error.status, error.code]).toEqual([409, "field_in_use"]);
      expect(error.problem?.audienceIds).toEqual([a, b].sort());
      expect(error.problem?.detail).toBe(`The rule of audiences ${named} uses fields.score; change the rule first.`);
    }
    expect((await listFields(ws)).map((f) => [f.key, f.type])).toEqual([["score", "number"]]);
    // The same type again is no change.
    expect((await declare(ws, "score", "number")).type).toBe("number");
  });

  it("cannot be typed while a rule reads it as a string", async ({ ws }) => {
    const audience = await createAudience(ws);
    await setRule(ws, audience, "score");
    const error = await rejectionOf(declare(ws, "score", "number"));
    expect([error.code, error.problem?.audienceIds]).toEqual(["field_in_use", [audience]]);
  });
});

describe("every write of a declared field is checked", () => {
  it("upsertMembers: 400 invalid_field_value pointing at each bad value, nothing written", async ({ ws }) => {
    await declare(ws, "score", "number");
    await declare(ws, "since", "date");
    const error = await rejectionOf(
      upsertMembers(ws, [
        { id: "ok", fields: { score: "7", since: "" } },
        { id: "m1", fields: { score: "seven", since: "2026-01-31" } },
        { id: "m2", fields: { since: "yesterday" } },
      ]),
    );
    expect([error.status, error.code]).toEqual([400, "invalid_field_value"]);
    expect(error.problem?.errors).toEqual([
      { pointer: "/body/members/1/fields/score", message: expect.stringMatching(/number.*"42"/) },
      { pointer: "/body/members/2/fields/since", message: expect.stringMatching(/date.*"2026-01-31"/) },
    ]);
    expect((await rejectionOf(getMember(ws, "ok"))).status).toBe(404);
    expect(await upsertMembers(ws, [{ id: "ok", fields: { score: "7", since: "2026-01-31T09:00:00+02:00" } }])).toEqual(
      { results: [{ id: "ok", status: "created" }] },
    );
  });

  it("updateMember: 400 pointing at /body/fields/<key>, the member unchanged", async ({ ws }) => {
    await declare(ws, "vip", "boolean");
    await upsertMembers(ws, [{ id: "m1", fields: { vip: "true" } }]);
    const patch = (vip: string) =>
      ws.api.PATCH(MEMBER, { params: { path: { workspaceId: ws.id, memberId: "m1" } }, body: { fields: { vip } } });
    const error = await rejectionOf(patch("yes"));
    expect([error.status, error.code]).toEqual([400, "invalid_field_value"]);
    expect(error.problem?.errors).toEqual([{ pointer: "/body/fields/vip", message: expect.stringMatching(/"true"/) }]);
    expect((await getMember(ws, "m1")).fields.vip).toBe("true");
    expect((await patch("False")).fields.vip).toBe("False");
  });

  it("addAudienceMembers: 400 pointing at the member's field, nothing added", async ({ ws }) => {
    await declare(ws, "score", "number");
    const audienceId = await createAudience(ws);
    const path = { workspaceId: ws.id, audienceId };
    const error = await rejectionOf(
      ws.api.POST("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
        params: { path },
        body: { memberIds: ["bare"], members: [withScore("m1", "1"), withScore("m2", "x")] },
      }),
    );
    expect([error.status, error.code]).toEqual([400, "invalid_field_value"]);
    expect(error.problem?.errors?.map((e) => e.pointer)).toEqual(["/body/members/1/fields/score"]);
    const page = await ws.api.GET("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", { params: { path } });
    expect(page.totalCount).toBe(0);
    expect((await rejectionOf(getMember(ws, "bare"))).status).toBe(404);
  });

  it("an import rejects the row with its line and why, and imports the others", async ({ ws }) => {
    await declare(ws, "score", "number");
    const job = await importCsv(
      ws,
      csvOf([
        ["id", "email", "score"],
        ["m1", "a@example.com", "1"],
        ["m2", "b@example.com", "abc"],
        ["m3", "c@example.com", ""],
      ]),
    );
    expect(job).toMatchObject({ status: "succeeded", created: 2, rejected: 1 });
    expect(job.errors).toEqual([{ line: 3, message: 'score: not a number ("abc")' }]);
    expect((await getMember(ws, "m1")).fields.score).toBe("1");
    expect((await getMember(ws, "m3")).email).toBe("c@example.com");
    expect((await rejectionOf(getMember(ws, "m2"))).status).toBe(404);
  });
});

describe("Idempotency-Key on declareField", () => {
  it("replays the first answer and refuses the same key with another type: 422", async ({ ws }) => {
    const put = (type: FieldType) =>
      ws.api.raw.PUT(FIELD, {
        params: { path: { workspaceId: ws.id, fieldKey: "score" }, header: { "Idempotency-Key": "declare-1" } },
        body: { type },
      });
    const first = await put("number");
    const again = await put("number");
    expect([first.response.status, again.response.status]).toEqual([200, 200]);
    expect(again.data).toEqual(first.data);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    const other = await put("date");
    expect([other.response.status, other.error?.code]).toEqual([422, "idempotency_key_reused"]);
    expect((await listFields(ws)).map((f) => f.type)).toEqual(["number"]);
  });
});
