import { describe, expect, it } from "vitest";
import type { AppError } from "../../src/domain/errors.ts";
import type { FieldType } from "../../src/domain/field-types.ts";
import type { HeldField } from "../../src/features/fields/field-catalogue-repo.ts";
import { createFieldService } from "../../src/features/fields/field-service.ts";
import type { FieldTypeRow } from "../../src/features/membership/rules/field-type-repo.ts";
import type { Filter } from "../../src/features/membership/rules/filter.ts";
import { fakeStore, fakeTx } from "./fakes/fake-stores.ts";

/** The service on fakes: declarations in a map, rules in a list, every step logged. */
function setUp(options: { rules?: { id: string; filter: Filter }[]; misfits?: number; held?: HeldField[] } = {}) {
  const declared = new Map<string, FieldTypeRow>();
  const log: string[] = [];
  const service = createFieldService({
    store: fakeStore,
    membership: {
      workspaceWrite: async (workspaceId, { memberWrites }, fn) => {
        log.push(`write ${workspaceId} memberWrites=${memberWrites}`);
        return fn({ tx: fakeTx } as Parameters<typeof fn>[0]);
      },
    },
    fieldTypes: {
      list: async () => [...declared.values()],
      declare: async (_tx, _ws, key, type) => {
        log.push(`declare ${key} ${type}`);
        const row = { key, type, createdAt: new Date("2026-11-21T09:41:00Z") };
        declared.set(key, row);
        return row;
      },
      remove: async (_tx, _ws, key) => {
        log.push(`remove ${key}`);
        return declared.delete(key);
      },
      misfits: async (_tx, _ws, key, type) => {
        log.push(`misfits ${key} ${type}`);
        const count = options.misfits ?? 0;
        const memberIds = Array.from({ length: Math.min(count, 10) }, (_, i) => `m${i}`);
        return { count, memberIds, misfits: memberIds.map((memberId) => ({ memberId, email: null, value: "x" })) };
      },
    },
    rules: {
      rules: async () => (options.rules ?? []).map((rule) => ({ ...rule, name: `Rule ${rule.id}`, isArchived: false })),
    },
    catalogue: { held: async () => options.held ?? [] },
  });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail("expected a failure"),
      (e: AppError) => e,
    );
  return { service, declared, log, failure };
}

const rule = (key: string): Filter => ({ all: [{ field: `fields.${key}`, op: "eq", value: "1" }] });

describe("declaring a field's type", () => {
  it("checks the stored values under the member lock, then declares", async () => {
    const { service, log } = setUp();
    expect(await service.declare("ws", "score", "number")).toEqual({
      key: "score",
      type: "number",
      createdAt: "2026-11-21T09:41:00.000Z",
    });
    expect(log).toEqual(["write ws memberWrites=true", "misfits score number", "declare score number"]);
  });

  it("refuses a named field before taking any lock", async () => {
    const { service, log, failure } = setUp();
    const error = await failure(service.declare("ws", "company", "number"));
    expect([error.status, error.code, error.errors?.[0]?.pointer]).toEqual([
      400,
      "invalid_request",
      "/params/fieldKey",
    ]);
    expect(log).toEqual([]);
  });

  it("writes nothing when stored values do not parse", async () => {
    const { service, log, failure, declared } = setUp({ misfits: 12 });
    const error = await failure(service.declare("ws", "score", "date"));
    expect([error.code, error.extensions]).toEqual([
      "field_values_invalid",
      {
        count: 12,
        memberIds: ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"],
        misfits: ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"].map((memberId) => ({
          memberId,
          email: null,
          value: "x",
        })),
      },
    ]);
    expect(log).not.toContain("declare score date");
    expect(declared.size).toBe(0);
  });

  it("refuses a change of type a rule depends on, naming the audiences in order, before reading values", async () => {
    const rules = [
      { id: "aud_b", filter: rule("score") },
      { id: "aud_c", filter: rule("tier") },
      { id: "aud_a", filter: { any: [rule("tier"), rule("score")] } },
    ];
    const { service, log, failure } = setUp({ rules });
    const error = await failure(service.declare("ws", "score", "number"));
    expect([error.code, error.extensions]).toEqual(["field_in_use", { audienceIds: ["aud_a", "aud_b"] }]);
    expect(error.detail).toBe(
      'The rule of audiences "Rule aud_a" (aud_a), "Rule aud_b" (aud_b) uses fields.score; change the rule first.',
    );
    expect(log).toEqual(["write ws memberWrites=true"]);
  });

  it.for<FieldType>(["number", "string"])(
    "declaring the type a field already has changes nothing, even with a rule using it (%s)",
    async (type) => {
      const { service, declared, log } = setUp({ rules: [{ id: "aud_a", filter: rule("score") }] });
      if (type === "number") declared.set("score", { key: "score", type, createdAt: new Date(0) });
      expect((await service.declare("ws", "score", type)).type).toBe(type);
      expect(log).toEqual(["write ws memberWrites=true"]);
    },
  );

  it("going back to string removes the declaration and checks no value", async () => {
    const { service, declared, log } = setUp();
    declared.set("score", { key: "score", type: "number", createdAt: new Date(0) });
    expect((await service.declare("ws", "score", "string")).type).toBe("string");
    expect(log).toEqual(["write ws memberWrites=true", "remove score"]);
  });
});

describe("removing a field's type", () => {
  it("answers field_not_found for a field with no declared type", async () => {
    const { service, failure } = setUp();
    const error = await failure(service.remove("ws", "score"));
    expect([error.status, error.code]).toEqual([404, "field_not_found"]);
  });

  it("refuses while a rule uses the field, and removes it otherwise", async () => {
    const used = setUp({ rules: [{ id: "aud_a", filter: rule("score") }] });
    used.declared.set("score", { key: "score", type: "number", createdAt: new Date(0) });
    expect((await used.failure(used.service.remove("ws", "score"))).code).toBe("field_in_use");
    expect(used.declared.has("score")).toBe(true);
    const free = setUp();
    free.declared.set("score", { key: "score", type: "number", createdAt: new Date(0) });
    await free.service.remove("ws", "score");
    expect(free.declared.has("score")).toBe(false);
  });
});

describe("the field catalogue", () => {
  it("lists the named fields, the held ones and the declared ones by code point, each with its type", async () => {
    const held = [
      { key: "plan", memberCount: 2, sampleValues: ["free", "pro"] },
      { key: "Zone", memberCount: 1, sampleValues: ["eu"] },
      { key: "company", memberCount: 1, sampleValues: ["Acme"] },
    ];
    const { service, declared } = setUp({ held });
    declared.set("score", { key: "score", type: "number", createdAt: new Date("2026-11-21T09:41:00Z") });
    const { results } = await service.list("ws");
    expect(results.map((field) => field.key)).toEqual([
      "Zone",
      "company",
      "firstName",
      "lastName",
      "plan",
      "role",
      "score",
    ]);
    expect(results.find((field) => field.key === "plan")).toEqual({
      key: "plan",
      type: "string",
      createdAt: null,
      memberCount: 2,
      sampleValues: ["free", "pro"],
    });
    expect(results.find((field) => field.key === "score")).toEqual({
      key: "score",
      type: "number",
      createdAt: "2026-11-21T09:41:00.000Z",
      memberCount: 0,
      sampleValues: [],
    });
  });
});
