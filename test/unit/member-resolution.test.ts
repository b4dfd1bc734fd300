// An upsert's inputs resolved against the members table (member-resolution.ts), on an in-memory
// table: which members a batch creates, which it merges into and how it matches them (by id, by
// any e-mail, case-folded), what it writes and the events a caller records, and its refusals.
import { describe, expect, it } from "vitest";
import type { AppError } from "../../src/domain/errors.ts";
import type { FieldType } from "../../src/domain/field-types.ts";
import type { MemberInput } from "../../src/domain/member-identity.ts";
import { emailKey, emailKeysOf, type MemberData } from "../../src/domain/member-merge.ts";
import type { NumberedMemberRow } from "../../src/features/membership/member-repo.ts";
import { membersOf } from "../../src/features/membership/member-set.ts";
import type { OutboxEntry } from "../../src/features/membership/outbox-entries.ts";
import {
  candidatesOfInputs,
  type MemberWrites,
  type ResolveOptions,
  resolveMemberInputs,
} from "../../src/features/membership/upsert/member-resolution.ts";
import { fakeTx } from "./fakes/fake-stores.ts";

/** The members table and its e-mail owners in memory, recording which reads and writes were made. */
class MemberTable {
  readonly rows = new Map<string, NumberedMemberRow>();
  readonly owners = new Map<string, string>();
  readonly types = new Map<string, FieldType>();
  readonly calls: string[] = [];
  private nextSeq = 0;

  /** A member already stored, owning its addresses. */
  seed(id: string, data: MemberData): NumberedMemberRow {
    const row = this.insertRow(id, data);
    for (const key of emailKeysOf(data)) this.owners.set(key, id);
    return row;
  }

  private insertRow(id: string, data: MemberData): NumberedMemberRow {
    const row = { id, seq: this.nextSeq++, createdAt: new Date(Date.UTC(2026, 0, 1)), ...data };
    this.rows.set(id, row);
    return row;
  }

  data = (id: string): MemberData | undefined => {
    const row = this.rows.get(id);
    return row && { email: row.email, fields: row.fields, alternativeEmails: row.alternativeEmails };
  };

  readonly repo: MemberWrites = {
    findEmailOwners: async (_tx, _ws, keys) => {
      this.calls.push("findEmailOwners");
      return new Map(keys.flatMap((key) => (this.owners.has(key) ? [[key, this.owners.get(key) as string]] : [])));
    },
    findByIds: async (_tx, _ws, ids) => {
      this.calls.push("findByIds");
      return ids.flatMap((id) => this.rows.get(id) ?? []);
    },
    fieldTypes: async () => {
      this.calls.push("fieldTypes");
      return new Map(this.types);
    },
    // As the statement does: one batch numbered in id order, a bare id that names someone only
    // numbered, and no address owned before claimEmails.
    insert: async (_tx, _ws, withData, bareIds) => {
      this.calls.push("insert");
      const bare = bareIds.filter((id) => !withData.some((m) => m.id === id));
      const fresh = [
        ...withData,
        ...bare.filter((id) => !this.rows.has(id)).map((id) => ({ id, data: emptyData() })),
      ].sort((a, b) => (a.id < b.id ? -1 : 1));
      const existing = bare.flatMap((id) =>
        this.rows.has(id) ? [[id, this.rows.get(id)?.seq as number] as const] : [],
      );
      const created = fresh.map(({ id, data }) => [id, this.insertRow(id, data).seq] as const);
      const createdBare = created.flatMap(([id]) => (withData.some((m) => m.id === id) ? [] : [id]));
      return { createdBare, seqs: new Map([...created, ...existing]) };
    },
    updateData: async (_tx, _ws, members) => {
      this.calls.push("updateData");
      for (const { id, data } of members) this.rows.set(id, { ...(this.rows.get(id) as NumberedMemberRow), ...data });
    },
    claimEmails: async (_tx, _ws, claims) => {
      this.calls.push("claimEmails");
      for (const { emailKey: key, memberId } of claims) this.owners.set(key, memberId);
    },
  };

  resolve(inputs: MemberInput[], bareIds: string[] = [], options: ResolveOptions = {}) {
    return resolveMemberInputs(this.repo, fakeTx, "ws", inputs, bareIds, options);
  }
}

const byNumber = (a: number | undefined, b: number | undefined) => (a as number) - (b as number);
const emptyData = (): MemberData => ({ email: null, fields: {}, alternativeEmails: [] });

function withAda() {
  const table = new MemberTable();
  const ada = table.seed("m_ada", {
    email: "ada@example.com",
    fields: { firstName: "Ada" },
    alternativeEmails: ["Ada@Work.example"],
  });
  const grace = table.seed("m_grace", { email: "grace@example.com", fields: {}, alternativeEmails: [] });
  return { table, ada, grace };
}

/** The members a batch's members.created event names, by number. */
const createdIn = (events: OutboxEntry[]) =>
  events.flatMap((event) => (event.type === "members.created" ? membersOf(event.created) : []));
const updatedIn = (events: OutboxEntry[]) =>
  events.flatMap((event) => (event.type === "members.updated" ? event.members : []));

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    return error as AppError;
  }
  throw new Error("expected the batch to be refused");
}

describe("resolving an upsert's inputs against the members table", () => {
  it("creates a member for an input that matches nobody, owning its addresses, with one members.created", async () => {
    const { table } = withAda();
    const resolved = await table.resolve([{ email: "Lin@Example.com", fields: { role: "Engineer" } }]);

    const [id] = resolved.memberIds;
    expect(id).toMatch(/^mem_/);
    expect(table.data(id as string)).toEqual({
      email: "Lin@Example.com",
      fields: { role: "Engineer" },
      alternativeEmails: [],
    });
    expect(table.owners.get("lin@example.com")).toBe(id);
    const seq = table.rows.get(id as string)?.seq;
    expect(resolved).toMatchObject({
      created: 1,
      merged: 0,
      createdBare: [],
      seqs: [seq],
      changedIds: [id],
      outcomes: [{ id, status: "created" }],
      rejected: [],
    });
    expect(resolved.seqOf.get(id as string)).toBe(seq);
    expect(createdIn(resolved.events)).toEqual([seq]);
    expect(updatedIn(resolved.events)).toEqual([]);
  });

  it("merges an input into the member owning any of its e-mails, whatever their case", async () => {
    const { table, ada } = withAda();
    const resolved = await table.resolve([
      { email: "ADA@WORK.EXAMPLE", alternativeEmails: ["countess@example.com"], fields: { lastName: "Lovelace" } },
    ]);

    expect(resolved).toMatchObject({ memberIds: ["m_ada"], created: 0, merged: 1, seqs: [ada.seq] });
    expect(resolved.outcomes).toEqual([{ id: "m_ada", status: "merged" }]);
    // The address it already had keeps its place; the new one is an alternative, now Ada's.
    expect(table.data("m_ada")).toEqual({
      email: "ada@example.com",
      fields: { firstName: "Ada", lastName: "Lovelace" },
      alternativeEmails: ["Ada@Work.example", "countess@example.com"],
    });
    expect(table.owners.get("countess@example.com")).toBe("m_ada");
    expect(updatedIn(resolved.events)).toEqual([{ id: "m_ada", changed: ["alternativeEmails", "fields.lastName"] }]);
    expect(createdIn(resolved.events)).toEqual([]);
    expect(resolved.written.get("m_ada")).toEqual(table.data("m_ada"));
  });

  it("matches by id; an input that changes nothing writes nothing and has no event", async () => {
    const { table, grace } = withAda();
    const resolved = await table.resolve([{ id: "m_grace", email: "grace@example.com" }]);

    expect(resolved).toMatchObject({ memberIds: ["m_grace"], created: 0, merged: 0, changedIds: [] });
    expect(resolved.outcomes).toEqual([{ id: "m_grace", status: "unchanged" }]);
    expect(resolved.seqOf.get("m_grace")).toBe(grace.seq);
    expect(resolved.events).toEqual([]);
    expect(table.calls).not.toContain("fieldTypes");
  });

  it("creates a member with the id an input names when nobody has it", async () => {
    const { table } = withAda();
    const resolved = await table.resolve([{ id: "crm-42", fields: { company: "Analytical Engines" } }]);

    expect(resolved.memberIds).toEqual(["crm-42"]);
    expect(resolved.outcomes).toEqual([{ id: "crm-42", status: "created" }]);
    expect(table.data("crm-42")?.fields).toEqual({ company: "Analytical Engines" });
    expect(createdIn(resolved.events)).toEqual([table.rows.get("crm-42")?.seq]);
  });

  it("applies a batch's inputs in order: a later input merges into the member an earlier one created", async () => {
    const { table } = withAda();
    const resolved = await table.resolve([
      { email: "lin@example.com", fields: { firstName: "Lin" } },
      { email: "LIN@example.com", fields: { lastName: "Chen" } },
    ]);

    const [id] = resolved.memberIds;
    expect(resolved.memberIds).toHaveLength(1);
    expect(resolved.outcomes.map((o) => o.status)).toEqual(["created", "merged"]);
    expect(resolved).toMatchObject({ created: 1, merged: 0 });
    expect(table.data(id as string)?.fields).toEqual({ firstName: "Lin", lastName: "Chen" });
  });

  it("creates the bare ids that name nobody in the same batch, and numbers those that do", async () => {
    const { table, ada } = withAda();
    const resolved = await table.resolve([{ email: "lin@example.com" }], ["m_ada", "crm-7"]);

    const lin = resolved.memberIds[0] as string;
    const seqOf = (id: string) => table.rows.get(id)?.seq as number;
    expect(resolved.createdBare).toEqual(["crm-7"]);
    expect(table.data("crm-7")).toEqual(emptyData());
    expect(resolved.seqs.sort(byNumber)).toEqual([seqOf(lin), ada.seq, seqOf("crm-7")].sort(byNumber));
    expect(createdIn(resolved.events).sort(byNumber)).toEqual([seqOf(lin), seqOf("crm-7")].sort(byNumber));
    expect(table.calls.filter((call) => call === "insert")).toHaveLength(1);
  });

  it("with bare ids only, creates those that name nobody and reads nothing else", async () => {
    const { table, grace } = withAda();
    const resolved = await table.resolve([], ["m_grace", "crm-8"]);

    expect(resolved).toMatchObject({ memberIds: [], createdBare: ["crm-8"], created: 0, merged: 0, changedIds: [] });
    expect(resolved.seqs.sort(byNumber)).toEqual([grace.seq, table.rows.get("crm-8")?.seq].sort(byNumber));
    expect(createdIn(resolved.events)).toEqual([table.rows.get("crm-8")?.seq]);
    expect(table.calls).toEqual(["insert"]);
  });

  it("refuses a batch whose input names one member by id and another by e-mail, writing nothing", async () => {
    const { table } = withAda();
    const error = await refusal(
      table.resolve([{ email: "lin@example.com" }, { id: "m_grace", email: "ada@example.com" }]),
    );

    expect([error.status, error.code]).toEqual([409, "member_identity_conflict"]);
    expect(error.detail).toBe("members[1] names member m_grace, but its e-mails belong to member m_ada.");
    expect(table.calls).not.toContain("insert");
    expect(table.owners.has("lin@example.com")).toBe(false);
  });

  it("with rejectBadInputs, leaves out an input whose e-mails belong to two members and applies the rest", async () => {
    const { table } = withAda();
    const resolved = await table.resolve(
      [
        { email: "ada@example.com", alternativeEmails: ["grace@example.com"] },
        { id: "m_grace", fields: { role: "Rear admiral" } },
      ],
      [],
      { rejectBadInputs: true },
    );

    expect(resolved.rejected).toEqual([
      { index: 0, message: "its e-mails belong to two different members: m_ada and m_grace" },
    ]);
    expect(resolved.memberIds).toEqual(["m_grace"]);
    expect(table.data("m_grace")?.fields).toEqual({ role: "Rear admiral" });
    expect(table.data("m_ada")?.alternativeEmails).toEqual(["Ada@Work.example"]);
  });

  it("checks custom values against the declared field types, read only when a custom value is sent", async () => {
    const { table } = withAda();
    table.types.set("score", "number");
    const error = await refusal(table.resolve([{ id: "m_grace", fields: { score: "lots" } }]));

    expect([error.status, error.code]).toEqual([400, "invalid_field_value"]);
    expect(error.errors).toEqual([
      { pointer: "/body/members/0/fields/score", message: expect.stringMatching(/^is not a number/) },
    ]);
    expect(table.calls).toContain("fieldTypes");
    expect(table.data("m_grace")?.fields).toEqual({});

    const named = new MemberTable();
    named.types.set("score", "number");
    await named.resolve([{ email: "lin@example.com", fields: { firstName: "Lin", score: "" } }]);
    expect(named.calls).not.toContain("fieldTypes");
  });

  it("takes the candidates and members its caller read under the member lock instead of reading them", async () => {
    const { table, ada, grace } = withAda();
    const inputs: MemberInput[] = [
      { email: "ada@example.com", fields: { role: "Analyst" } },
      { id: "m_grace", fields: { score: "7" } },
    ];
    expect(candidatesOfInputs(inputs)).toEqual({ ids: ["m_grace"], emailKeys: ["ada@example.com"] });
    const resolved = await table.resolve(inputs, [], {
      // The read holds Ada and Grace; Grace is known to the caller already, as it now stands.
      candidates: {
        owners: new Map([[emailKey("Ada@example.com"), "m_ada"]]),
        rows: [ada, grace],
        types: new Map([["score", "number"]]),
      },
      known: [{ ...grace, fields: { role: "Admiral" } }],
    });

    expect(table.calls.filter((call) => call.startsWith("find") || call === "fieldTypes")).toEqual([]);
    expect(resolved.memberIds).toEqual(["m_ada", "m_grace"]);
    expect(table.data("m_ada")?.fields).toEqual({ firstName: "Ada", role: "Analyst" });
    expect(table.data("m_grace")?.fields).toEqual({ role: "Admiral", score: "7" });
  });

  it("with deferUpdates, returns the changed members' data for the caller to write", async () => {
    const { table } = withAda();
    const resolved = await table.resolve([{ id: "m_ada", fields: { role: "Analyst" } }], [], { deferUpdates: true });

    const data = {
      email: "ada@example.com",
      fields: { firstName: "Ada", role: "Analyst" },
      alternativeEmails: ["Ada@Work.example"],
    };
    expect(resolved.updates).toEqual([{ id: "m_ada", data }]);
    expect(table.calls).not.toContain("updateData");
    expect(table.data("m_ada")?.fields).toEqual({ firstName: "Ada" });
    expect(updatedIn(resolved.events)).toEqual([{ id: "m_ada", changed: ["fields.role"] }]);
  });
});
