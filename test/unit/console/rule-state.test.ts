import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  draftOf,
  emptyDraft,
  type Filter,
  filterOf,
  isComplete,
  newCondition,
  newGroup,
  pointersOf,
  removeRow,
  rowAtError,
  setMatch,
  updateRow,
} from "../../../console/src/rules/rule-state.ts";
import { describeNode, nodeAt } from "../../../console/src/rules/rule-text.ts";

const TYPES = { score: "number", lastOrder: "date", vip: "boolean" } as const;

describe("the rule builder's state", () => {
  it("builds the filter a person assembles, and finds each row's node by pointer", () => {
    let draft = newCondition(emptyDraft());
    draft = updateRow(draft, 1, { field: "fields.score", op: "gt", value: "50" }, TYPES);
    draft = newGroup(draft);
    draft = updateRow(draft, 3, { field: "fields.lastOrder", op: "withinLast", value: "P30D" }, TYPES);
    draft = newCondition(draft, 2);
    draft = updateRow(draft, 4, { field: "audience", op: "notIn", value: "aud_customers" }, TYPES);

    expect(filterOf(draft, TYPES)).toEqual({
      all: [
        { field: "fields.score", op: "gt", value: "50" },
        {
          any: [
            { field: "fields.lastOrder", op: "withinLast", value: "P30D" },
            { field: "audience", op: "notIn", value: "aud_customers" },
          ],
        },
      ],
    });
    expect([...pointersOf(draft)]).toEqual([
      [1, "/all/0"],
      [2, "/all/1"],
      [3, "/all/1/any/0"],
      [4, "/all/1/any/1"],
    ]);
    expect(rowAtError(draft, "/body/filter/all/1/any/1/value")).toBe(4);
    expect(rowAtError(draft, "/body/filter/all/1")).toBe(2);
    expect(rowAtError(draft, "/body/filter")).toBeUndefined();

    const any = setMatch(draft, "any");
    expect(Object.keys(filterOf(any, TYPES) ?? {})).toEqual(["any"]);
    expect(pointersOf(any).get(3)).toBe("/any/1/any/0");
  });

  it("splits lists and ranges, and drops the value of presence checks", () => {
    let draft = newCondition(newCondition(newCondition(emptyDraft())));
    draft = updateRow(draft, 1, { field: "fields.score", op: "between", value: "10, 20" }, TYPES);
    draft = updateRow(draft, 2, { field: "email", op: "in", value: "a@x.org,  b@x.org" }, TYPES);
    draft = updateRow(draft, 3, { field: "fields.vip", op: "exists", value: "ignored" }, TYPES);
    expect(filterOf(draft, TYPES)).toEqual({
      all: [
        { field: "fields.score", op: "between", value: ["10", "20"] },
        { field: "email", op: "in", value: ["a@x.org", "b@x.org"] },
        { field: "fields.vip", op: "exists" },
      ],
    });
  });

  it("keeps an operator the new field's kind has, and otherwise takes the kind's first", () => {
    const draft = updateRow(newCondition(emptyDraft()), 1, { field: "email", op: "eq", value: "x" }, TYPES);
    const number = updateRow(draft, 1, { field: "fields.score" }, TYPES);
    expect(filterOf(number, TYPES)).toEqual({ all: [{ field: "fields.score", op: "eq", value: "x" }] });
    const date = updateRow(draft, 1, { field: "fields.lastOrder" }, TYPES);
    expect(filterOf(date, TYPES)).toEqual({ all: [{ field: "fields.lastOrder", op: "before", value: "" }] });
  });

  it("is complete only when every condition has what its operator needs", () => {
    let draft = updateRow(newCondition(emptyDraft()), 1, { field: "fields.score", op: "between", value: "10," }, TYPES);
    expect(isComplete(draft, TYPES)).toBe(false);
    draft = updateRow(draft, 1, { value: "10, 20" }, TYPES);
    expect(isComplete(draft, TYPES)).toBe(true);
    draft = updateRow(draft, 1, { field: "" }, TYPES);
    expect(isComplete(draft, TYPES)).toBe(false);
  });

  it("removes rows, and a group with its last row", () => {
    const draft = newCondition(newGroup(emptyDraft()));
    expect(removeRow(draft, 2).items.map((item) => item.id)).toEqual([3]);
    expect(filterOf(removeRow(removeRow(draft, 2), 3), TYPES)).toBeNull();
  });

  it("opens the filters it can draw as they were saved, and no others", () => {
    const condition = fc.record({
      // fields.email keeps its prefix: a bare email is the built-in field.
      field: fc.constantFrom("email", "fields.score", "fields.city", "fields.email"),
      op: fc.constantFrom("eq", "ne", "contains"),
      value: fc.string({ minLength: 1, maxLength: 5 }).filter((s) => !s.includes(",") && s.trim() === s && s !== ""),
    }) as fc.Arbitrary<Filter>;
    const group = fc.oneof(
      fc.array(condition, { minLength: 1, maxLength: 3 }).map((all) => ({ all })),
      fc.array(condition, { minLength: 1, maxLength: 3 }).map((any) => ({ any })),
    );
    const filter = fc.oneof(
      fc.array(fc.oneof(condition, group), { minLength: 1, maxLength: 4 }).map((all) => ({ all }) as Filter),
      fc.array(fc.oneof(condition, group), { minLength: 1, maxLength: 4 }).map((any) => ({ any }) as Filter),
    );
    fc.assert(
      fc.property(filter, (saved) => {
        const draft = draftOf(saved);
        expect(draft && filterOf(draft, {})).toEqual(saved);
      }),
    );
    expect(draftOf({ not: { all: [{ field: "email", op: "exists" }] } })).toBeUndefined();
    expect(draftOf({ all: [{ any: [{ all: [{ field: "email", op: "exists" }] }] }] })).toBeUndefined();
    expect(draftOf(null)).toEqual(emptyDraft());
  });

  it("shows custom fields by their key and sends them as fields.<key>", () => {
    const draft = draftOf({ all: [{ field: "fields.plan", op: "eq", value: "pro" }] });
    expect(draft?.items[0]).toMatchObject({ field: "plan" });
    const typed = updateRow(
      newCondition(emptyDraft()),
      1,
      { field: "score", op: "gt", value: "5" },
      { score: "number" },
    );
    expect(filterOf(typed, { score: "number" })).toEqual({ all: [{ field: "fields.score", op: "gt", value: "5" }] });
    expect(filterOf(updateRow(typed, 1, { field: "anyEmail", op: "endsWith", value: "@a.com" }, {}), {})).toEqual({
      all: [{ field: "anyEmail", op: "endsWith", value: "@a.com" }],
    });
  });

  it("names the node an explanation points at", () => {
    const filter: Filter = {
      all: [
        { field: "fields.score", op: "between", value: ["10", "20"] },
        { not: { field: "audience", op: "in", value: "aud_1" } },
      ],
    };
    const node = nodeAt(filter, "/all/0");
    expect(node && describeNode(node)).toBe("score is between 10 and 20");
    const inner = nodeAt(filter, "/all/1/not");
    expect(inner && describeNode(inner, new Map([["aud_1", "Customers"]]))).toBe("in audience Customers");
    expect(nodeAt(filter, "/all/7")).toBeUndefined();
  });
});
