import { describe, expect, it } from "vitest";
import type { AppError } from "../../src/domain/errors.ts";
import { type MemberInput, planMemberUpserts } from "../../src/domain/member-identity.ts";
import type { MemberData } from "../../src/domain/member-merge.ts";

const ada: MemberData = {
  email: "ada@example.com",
  fields: { firstName: "Ada" },
  alternativeEmails: ["ada@work.example"],
};
const grace: MemberData = { email: "grace@example.com", fields: {}, alternativeEmails: [] };
const stored = new Map([
  ["m_ada", ada],
  ["m_grace", grace],
]);
const owners = new Map([
  ["ada@example.com", "m_ada"],
  ["ada@work.example", "m_ada"],
  ["grace@example.com", "m_grace"],
]);

function ids() {
  let n = 0;
  return () => `new_${++n}`;
}

function conflict(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    return error as AppError;
  }
  throw new Error("expected a conflict");
}

describe("resolving member inputs", () => {
  it("matches by id, then by any e-mail, and creates the rest", () => {
    const plan = planMemberUpserts(
      [
        { id: "m_grace", fields: { role: "Admiral" } },
        { email: "ADA@work.example", fields: { lastName: "L" } },
        { email: "new@example.com" },
      ],
      stored,
      owners,
      ids(),
    );
    expect(plan.memberIds).toEqual(["m_grace", "m_ada", "new_1"]);
    expect(plan.update.map((u) => u.id)).toEqual(["m_grace", "m_ada"]);
    expect(plan.create).toEqual([
      { id: "new_1", data: { email: "new@example.com", fields: {}, alternativeEmails: [] } },
    ]);
    expect(plan.claims).toEqual([{ emailKey: "new@example.com", memberId: "new_1" }]);
  });

  it("creates a member under a new client id", () => {
    const plan = planMemberUpserts([{ id: "crm-7", email: "x@example.com" }], stored, owners, ids());
    expect(plan.create).toEqual([{ id: "crm-7", data: { email: "x@example.com", fields: {}, alternativeEmails: [] } }]);
  });

  it("applies inputs for the same member one after another", () => {
    const plan = planMemberUpserts(
      [
        { email: "z@example.com", fields: { firstName: "Zed" } },
        { email: "Z@example.com", fields: { lastName: "Zee" } },
      ],
      stored,
      owners,
      ids(),
    );
    expect(plan.create).toEqual([
      {
        id: "new_1",
        data: { email: "z@example.com", fields: { firstName: "Zed", lastName: "Zee" }, alternativeEmails: [] },
      },
    ]);
  });

  it("leaves unchanged members out of the updates", () => {
    const plan = planMemberUpserts([{ id: "m_ada", fields: { firstName: "Ada" } }], stored, owners, ids());
    expect(plan.update).toEqual([]);
    expect(plan.memberIds).toEqual(["m_ada"]);
  });

  it("refuses an input whose id and e-mail name different members", () => {
    const error = conflict(() =>
      planMemberUpserts([{ id: "m_grace", email: "ada@example.com" }], stored, owners, ids()),
    );
    expect(error.code).toBe("member_identity_conflict");
    expect(error.detail).toContain("m_grace");
    expect(error.detail).toContain("m_ada");
  });

  it("refuses an input whose e-mails belong to two members", () => {
    const error = conflict(() =>
      planMemberUpserts(
        [{ email: "grace@example.com", alternativeEmails: ["ada@example.com"] }],
        stored,
        owners,
        ids(),
      ),
    );
    expect(error.code).toBe("member_identity_conflict");
    expect(error.detail).toMatch(/members\[0\].*m_grace.*m_ada/);
  });

  it("refuses a new id whose e-mail another member owns", () => {
    expect(
      conflict(() => planMemberUpserts([{ id: "fresh", email: "grace@example.com" }], stored, owners, ids())).code,
    ).toBe("member_identity_conflict");
  });

  it("caps the number of fields a member accumulates", () => {
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v"]));
    const error = conflict(() => planMemberUpserts([{ id: "m_ada", fields: many }], stored, owners, ids()));
    expect(error.code).toBe("invalid_request");
    expect(error.errors?.[0]?.pointer).toBe("/body/members/0/fields");
  });
});

describe("what each input did", () => {
  it("created a member, merged data into one, or left one unchanged", () => {
    const plan = planMemberUpserts(
      [{ email: "new@example.com" }, { id: "m_ada", fields: { role: "Countess" } }, { id: "m_grace" }],
      stored,
      owners,
      ids(),
    );
    expect(plan.outcomes).toStrictEqual([
      { id: "new_1", status: "created" },
      { id: "m_ada", status: "merged" },
      { id: "m_grace", status: "unchanged" },
    ]);
  });
});

describe("the limits of what a member holds, at the limit and one past it", () => {
  const fields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));
  const emails = (n: number) => Array.from({ length: n }, (_, i) => `alt${i}@example.com`);

  it("50 fields in all are kept; one more, sent or accumulated, is refused", () => {
    expect(planMemberUpserts([{ id: "m_new", fields: fields(50) }], stored, owners, ids()).create).toHaveLength(1);
    // Ada has firstName: 49 more make 50, 50 more make 51.
    expect(planMemberUpserts([{ id: "m_ada", fields: fields(49) }], stored, owners, ids()).update).toHaveLength(1);
    const error = conflict(() => planMemberUpserts([{ id: "m_ada", fields: fields(50) }], stored, owners, ids()));
    expect(error).toMatchObject({
      code: "invalid_request",
      detail: "A member may have at most 50 fields.",
      errors: [{ pointer: "/body/members/0/fields", message: "would give the member more than 50 fields" }],
    });
  });

  it("100 alternative e-mails in all are kept; one more, sent or accumulated, is refused", () => {
    const plan = planMemberUpserts([{ id: "m_new", alternativeEmails: emails(100) }], stored, owners, ids());
    expect(plan.create[0]?.data.alternativeEmails).toHaveLength(100);
    // Ada has one: 99 more make 100, 100 more make 101.
    expect(
      planMemberUpserts([{ id: "m_ada", alternativeEmails: emails(99) }], stored, owners, ids()).update,
    ).toHaveLength(1);
    const error = conflict(() =>
      planMemberUpserts(
        [{ email: "grace@example.com" }, { id: "m_ada", alternativeEmails: emails(100) }],
        stored,
        owners,
        ids(),
      ),
    );
    expect(error).toMatchObject({
      code: "invalid_request",
      detail: "A member may have at most 100 alternative e-mails.",
      errors: [
        {
          pointer: "/body/members/1/alternativeEmails",
          message: "would give the member more than 100 alternative e-mails",
        },
      ],
    });
  });
});

describe("resolving member inputs, leaving bad ones out (an import's rows)", () => {
  it("rejects an input that matches two members, or would overfill one, and plans the others as if it were not there", () => {
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v"]));
    const plan = planMemberUpserts(
      [
        { email: "grace@example.com", alternativeEmails: ["ada@example.com"] },
        { id: "m_grace", email: "ada@work.example" },
        { id: "m_ada", fields: many },
        { email: "new@example.com", alternativeEmails: ["grace@example.com"] },
        { email: "grace@example.com", fields: { role: "Admiral" } },
      ],
      stored,
      owners,
      ids(),
      { rejectBadInputs: true },
    );
    expect(plan.rejected).toEqual([
      { index: 0, message: "its e-mails belong to two different members: m_grace and m_ada" },
      { index: 1, message: "its id names member m_grace, but its e-mails belong to member m_ada" },
      { index: 2, message: "would give the member more than 50 fields (member m_ada)" },
    ]);
    expect(plan.outcomes).toEqual([
      { id: "m_grace", status: "merged" },
      { id: "m_grace", status: "merged" },
    ]);
    expect(plan.create).toEqual([]);
    expect(plan.update).toEqual([
      {
        id: "m_grace",
        data: { email: "new@example.com", alternativeEmails: ["grace@example.com"], fields: { role: "Admiral" } },
      },
    ]);
    expect(plan.claims).toEqual([{ emailKey: "new@example.com", memberId: "m_grace" }]);
  });
});

describe("declared field types", () => {
  const types = new Map([
    ["score", "number"],
    ["since", "date"],
  ] as const);
  const inputs: MemberInput[] = [
    { id: "m_ada", fields: { score: "7", since: "" } },
    { email: "x@example.com", fields: { score: "seven", since: "yesterday" } },
    { id: "m_grace", fields: { score: "1e3", note: "free text" } },
  ];

  it("refuses the batch, pointing at every value that does not parse", () => {
    const error = conflict(() => planMemberUpserts(inputs, stored, owners, ids(), { types }));
    expect([error.status, error.code]).toEqual([400, "invalid_field_value"]);
    expect(error.errors?.map((e) => e.pointer)).toEqual([
      "/body/members/1/fields/score",
      "/body/members/1/fields/since",
    ]);
    expect(error.errors?.[0]?.message).toBe(
      'is not a number: send a number such as "42", "-3.5" or "1e3" (at most 64 characters)',
    );
    const patch = conflict(() =>
      planMemberUpserts([inputs[1] ?? {}], stored, owners, ids(), {
        types,
        fieldPointer: (_i, key) => `/body/fields/${key}`,
      }),
    );
    expect(patch.errors?.map((e) => e.pointer)).toEqual(["/body/fields/score", "/body/fields/since"]);
  });

  it("with rejectBadInputs, leaves the row out with why and applies the others", () => {
    const plan = planMemberUpserts(inputs, stored, owners, ids(), { types, rejectBadInputs: true });
    expect(plan.rejected).toEqual([{ index: 1, message: 'score: not a number ("seven")' }]);
    expect(plan.outcomes.map((o) => o.id)).toEqual(["m_ada", "m_grace"]);
  });
});
