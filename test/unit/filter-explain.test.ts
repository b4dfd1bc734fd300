// The node walker behind explainMembership: every node in document order, what each condition
// read, and a root that always answers as matches() does.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FieldType } from "../../src/domain/field-types.ts";
import { type Filter, foldMember, parseFilter } from "../../src/features/membership/rules/filter.ts";
import { explainFilter, filterNodes } from "../../src/features/membership/rules/filter-explain.ts";
import { matches } from "../../src/features/membership/rules/filter-match.ts";
import { opsOf } from "../support/operator-shapes.ts";

const TYPES = new Map<string, FieldType>([
  ["score", "number"],
  ["born", "date"],
  ["vip", "boolean"],
]);
const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);
const CREATED = new Date("2026-06-01T08:00:00.000Z");

const context = (audiences: string[]) => ({
  types: TYPES,
  now: NOW,
  inAudience: (id: string) => audiences.includes(id),
});
const member = (fields: Record<string, string>, email: string | null = null, alternativeEmails: string[] = []) => ({
  id: "Mem_1",
  email,
  alternativeEmails,
  fields,
});

describe("filterNodes", () => {
  it("lists every node, the root first, children after their parent, with pointers from the filter", () => {
    const filter = parseFilter(
      {
        all: [
          { field: "email", op: "exists" },
          {
            not: {
              any: [
                { field: "fields.score", op: "gt", value: "5" },
                { field: "id", op: "eq", value: "x" },
              ],
            },
          },
        ],
      },
      { types: TYPES },
    );
    expect(filterNodes(filter).map((n) => n.pointer)).toEqual([
      "",
      "/all/0",
      "/all/1",
      "/all/1/not",
      "/all/1/not/any/0",
      "/all/1/not/any/1",
    ]);
    expect(filterNodes(filter)[4]?.node).toEqual({ field: "fields.score", op: "gt", value: "5" });
  });
});

describe("explainFilter", () => {
  it("gives each condition the member's value as stored, and combinators none", () => {
    const filter = parseFilter(
      {
        any: [
          { field: "fields.plan", op: "eq", value: "pro" },
          { field: "anyEmail", op: "endsWith", value: "@acme.com" },
          { field: "audience", op: "notIn", value: "aud_vip" },
          { not: { field: "createdAt", op: "withinLast", value: "P30D" } },
          { field: "fields.score", op: "exists" },
          { field: "email", op: "exists" },
        ],
      },
      { types: TYPES },
    );
    const explained = explainFilter(
      filter,
      member({ plan: "Pro", score: "" }, "Ada@Acme.com", ["ada@home.org"]),
      CREATED,
      context(["aud_vip"]),
    );
    expect(explained).toEqual({
      matches: true,
      nodes: [
        { pointer: "", matches: true, value: null },
        { pointer: "/any/0", matches: true, value: "Pro" },
        { pointer: "/any/1", matches: true, value: ["Ada@Acme.com", "ada@home.org"] },
        { pointer: "/any/2", matches: false, value: true },
        { pointer: "/any/3", matches: false, value: null },
        { pointer: "/any/3/not", matches: true, value: CREATED.toISOString() },
        // An empty value is no value.
        { pointer: "/any/4", matches: false, value: null },
        { pointer: "/any/5", matches: true, value: "Ada@Acme.com" },
      ],
    });
  });

  it("reads no value for a member without one, and nothing of Object's own members", () => {
    const filter = parseFilter(
      {
        all: [
          { field: "anyEmail", op: "notExists" },
          { field: "fields.toString", op: "notExists" },
        ],
      },
      { types: TYPES },
    );
    expect(explainFilter(filter, member({}), CREATED, context([]))).toEqual({
      matches: true,
      nodes: [
        { pointer: "", matches: true, value: null },
        { pointer: "/all/0", matches: true, value: null },
        { pointer: "/all/1", matches: true, value: null },
      ],
    });
  });

  const condition: fc.Arbitrary<unknown> = fc.oneof(
    fc.record({
      field: fc.constant("fields.score"),
      op: fc.constantFrom(...opsOf("number", "one"), ...opsOf("number", "none")),
      value: fc.constantFrom("9", "10", "1e1"),
    }),
    fc.record({
      field: fc.constantFrom("fields.born", "createdAt"),
      op: fc.constantFrom(...opsOf("date", "one"), ...opsOf("date", "duration")),
      value: fc.constantFrom("2026-06-01", "2026-01-31T00:00:00Z", "P30D", "PT12H"),
    }),
    fc.record({
      field: fc.constant("fields.vip"),
      op: fc.constantFrom(...opsOf("boolean", "one"), ...opsOf("boolean", "none")),
      value: fc.constantFrom("true"),
    }),
    fc.record({
      field: fc.constantFrom("id", "email", "anyEmail", "fields.plan"),
      op: fc.constantFrom(...opsOf("string", "one"), ...opsOf("string", "list"), ...opsOf("string", "none")),
      value: fc.constantFrom("pro", "a@x.io", "mem_1", "x"),
    }),
    fc.record({
      field: fc.constant("audience"),
      op: fc.constantFrom("in", "notIn"),
      value: fc.constantFrom("a1", "a2"),
    }),
  );
  // Conditions as a client might write them; parseFilter keeps the ones that are valid.
  const rawFilter: fc.Arbitrary<unknown> = fc.letrec<{ f: unknown }>((tie) => ({
    f: fc.oneof(
      { depthSize: "small" },
      condition,
      fc.record({ all: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }),
      fc.record({ any: fc.array(tie("f"), { minLength: 1, maxLength: 3 }) }),
      fc.record({ not: tie("f") }),
    ),
  })).f;
  const parsed = (raw: unknown): Filter | undefined => {
    const fix = (node: unknown): unknown => {
      if (typeof node !== "object" || node === null) return node;
      const record = node as Record<string, unknown>;
      if ("all" in record) return { all: (record.all as unknown[]).map(fix) };
      if ("any" in record) return { any: (record.any as unknown[]).map(fix) };
      if ("not" in record) return { not: fix(record.not) };
      const { op, value } = record;
      if (op === "exists" || op === "notExists") return { field: record.field, op };
      if (op === "in" || op === "notIn") return record.field === "audience" ? record : { ...record, value: [value] };
      return record;
    };
    try {
      return parseFilter(fix(raw), { types: TYPES });
    } catch {
      return undefined;
    }
  };
  const memberData = fc.record({
    email: fc.constantFrom(null, "A@x.io", "b@y.org"),
    alternativeEmails: fc.subarray(["a@x.io", "PRO@z.io"]),
    fields: fc.record(
      {
        score: fc.constantFrom("9", "10", "1e1", ""),
        born: fc.constantFrom("2026-06-01", "2026-01-30T23:00:00-01:00"),
        vip: fc.constantFrom("true", "FALSE"),
        plan: fc.constantFrom("Pro", "pro plus", "x"),
      },
      { requiredKeys: [] },
    ),
  });

  it("answers at the root exactly as matches() does, for any rule and member", () => {
    fc.assert(
      fc.property(
        rawFilter,
        memberData,
        fc.subarray(["a1", "a2"]),
        fc.date({ min: new Date("2026-01-01"), max: new Date("2026-06-15T12:00:00Z"), noInvalidDate: true }),
        (raw, data, audiences, createdAt) => {
          const filter = parsed(raw);
          fc.pre(filter !== undefined);
          const m = { id: "Mem_1", ...data };
          const explained = explainFilter(filter as Filter, m, createdAt, context(audiences));
          const expected = matches(filter as Filter, foldMember(m), createdAt, context(audiences));
          expect(explained.matches).toBe(expected);
          expect(explained.nodes[0]).toMatchObject({ pointer: "", matches: expected });
          expect(explained.nodes.map((n) => n.pointer)).toEqual(filterNodes(filter as Filter).map((n) => n.pointer));
          // Every node answers as matches() does for that node alone.
          for (const { node, pointer } of filterNodes(filter as Filter)) {
            const at = explained.nodes.find((n) => n.pointer === pointer);
            expect(at?.matches).toBe(matches(node, foldMember(m), createdAt, context(audiences)));
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
