import { describe, expect, it } from "vitest";
import { emailKeysOf, mergeMemberData, withNamedFields } from "../../src/domain/member-merge.ts";

const stored = {
  email: "ada@example.com",
  fields: { firstName: "Ada", lastName: "Lovelace", role: "Engineer" },
  alternativeEmails: ["ada@work.example"],
};

describe("merging member data", () => {
  it("trims the addresses it is sent and drops empty ones", () => {
    const merged = mergeMemberData(
      { email: null, fields: {}, alternativeEmails: [] },
      { email: " new@example.com ", alternativeEmails: [" b@example.com ", "", "  "] },
    );
    expect(merged).toStrictEqual({ email: "new@example.com", fields: {}, alternativeEmails: ["b@example.com"] });
    expect(mergeMemberData(stored, { email: " ADA@example.com " })).toBe(stored);
    expect(emailKeysOf({ email: " Ada@Example.com ", alternativeEmails: [" B@x.org"] })).toEqual([
      "ada@example.com",
      "b@x.org",
    ]);
  });

  it("lets non-empty incoming fields win and keeps absent or empty ones", () => {
    const merged = mergeMemberData(stored, { fields: { role: "Countess", lastName: "", company: "AE" } });
    expect(merged.fields).toEqual({ firstName: "Ada", lastName: "Lovelace", role: "Countess", company: "AE" });
  });

  it("moves a new primary e-mail's predecessor into alternativeEmails", () => {
    const merged = mergeMemberData(stored, { email: "countess@example.com" });
    expect(merged.email).toBe("countess@example.com");
    expect(merged.alternativeEmails).toEqual(["ada@work.example", "ada@example.com"]);
  });

  it("treats a primary e-mail differing only in case as the same address", () => {
    expect(mergeMemberData(stored, { email: "ADA@example.com" })).toBe(stored);
  });

  it("unions alternative e-mails without duplicates or the primary", () => {
    const merged = mergeMemberData(stored, {
      alternativeEmails: ["ADA@WORK.example", "a@b.example", "ada@example.com"],
    });
    expect(merged.alternativeEmails).toEqual(["ada@work.example", "a@b.example"]);
  });

  it("keeps the primary when the incoming e-mail is one of the member's alternatives", () => {
    expect(mergeMemberData(stored, { email: "ada@work.example" })).toBe(stored);
    expect(mergeMemberData(stored, { email: "ADA@Work.Example", fields: { role: "Countess" } })).toEqual({
      ...stored,
      fields: { ...stored.fields, role: "Countess" },
    });
  });

  it("makes a known alternative the primary only when asked to (an explicit edit), keeping every address", () => {
    const merged = mergeMemberData(stored, { email: "ada@work.example", setPrimary: true });
    expect(merged.email).toBe("ada@work.example");
    expect(merged.alternativeEmails).toEqual(["ada@example.com"]);
    expect(emailKeysOf(merged).sort()).toEqual(["ada@example.com", "ada@work.example"]);
  });

  it("returns the stored object when nothing changes", () => {
    expect(mergeMemberData(stored, { fields: { firstName: "Ada" } })).toBe(stored);
    expect(mergeMemberData(stored, {})).toBe(stored);
  });

  it("gives a bare member its first e-mail", () => {
    const merged = mergeMemberData({ email: null, fields: {}, alternativeEmails: [] }, { email: "new@example.com" });
    expect(merged).toEqual({ email: "new@example.com", fields: {}, alternativeEmails: [] });
  });

  it("always answers the four named fields", () => {
    expect(withNamedFields({ plan: "pro" })).toEqual({
      firstName: "",
      lastName: "",
      role: "",
      company: "",
      plan: "pro",
    });
  });
});
