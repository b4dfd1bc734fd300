import { describe, expect, it } from "vitest";
import type { AppError } from "../../src/domain/errors.ts";
import { isBlank, readHeader, readRow } from "../../src/features/imports/import-columns.ts";
import { createMemberInputCheck } from "../../src/features/membership/member-input-check.ts";

const check = createMemberInputCheck();

function refusal(names: string[]): AppError {
  try {
    readHeader(names);
  } catch (error) {
    return error as AppError;
  }
  throw new Error("expected the header to be refused");
}

describe("an import's header row", () => {
  it("names id, email, alternativeEmails and field keys", () => {
    expect(readHeader(["id", "email", "alternativeEmails", "firstName", "plan_2"])).toEqual([
      { kind: "id" },
      { kind: "email" },
      { kind: "alternativeEmails" },
      { kind: "field", key: "firstName" },
      { kind: "field", key: "plan_2" },
    ]);
    expect(readHeader(["id"])).toEqual([{ kind: "id" }]);
    expect(readHeader(["email", `k${"a".repeat(63)}`])).toEqual([
      { kind: "email" },
      { kind: "field", key: `k${"a".repeat(63)}` },
    ]);
  });

  it.for([
    [["firstName", "company"], /must name an id or an email column/],
    [["email", "email"], /names the column "email" twice/],
    [["email", ""], /Column 2 of the header, ""/],
    [["email", "2fa"], /Column 2 of the header, "2fa"/],
    [["email", "a".repeat(65)], /Column 2/],
    [["email", `x${"a".repeat(100)}`], new RegExp(`Column 2 of the header, "x${"a".repeat(79)}…", is not`)],
    [
      ["id", "b", "a b"],
      /Column 3 of the header, "a b", is not id, email, alternativeEmails or a field key \(letters, digits and _, starting with a letter, at most 64 characters\)\.$/,
    ],
    [["firstName", "company"], /^The header must name an id or an email column; it names "firstName", "company"\.$/],
    [["email", `1${"a".repeat(79)}`], new RegExp(`Column 2 of the header, "1${"a".repeat(79)}", is not`)],
    [["id", "b", "id"], /^The header names the column "id" twice\.$/],
    [["email", "Email Address"], /"Email Address", is not id, email, alternativeEmails or a field key/],
    // Characters that do not show are written as \u escapes of four hex digits (DEL: JSON leaves
    // it as it is, unlike the C0 controls it escapes itself); only a first
    // column that still starts with a byte order mark names a second one as the cause.
    [["email", "a\u007fb"], /^Column 2 of the header, "a\\u007fb", is not id, .* at most 64 characters\)\.$/],
    [
      ["\uFEFFemail"],
      /^Column 1 of the header, "\\ufeffemail", .*\. The file starts with more than one byte order mark\.$/,
    ],
    [["email", "\uFEFFrole"], /^Column 2 of the header, "\\ufeffrole", is not id, .* at most 64 characters\)\.$/],
    [["2fa", "email"], /^Column 1 of the header, "2fa", is not id, .* at most 64 characters\)\.$/],
  ] as const)("refuses %j with 400 invalid_csv", ([names, detail]) => {
    const error = refusal([...names]);
    expect([error.status, error.code]).toEqual([400, "invalid_csv"]);
    expect(error.detail).toMatch(detail);
  });
});

describe("an import's data row", () => {
  const columns = readHeader(["id", "email", "alternativeEmails", "company", "plan"]);

  it("becomes a member input: empty cells absent, addresses trimmed and split at ;", () => {
    // Strict: a key present with undefined is not an absent value.
    expect(readRow(columns, ["m1", " ada@example.com ", "a@x.org; ;b@x.org", "", "pro"], check)).toStrictEqual({
      input: { id: "m1", email: "ada@example.com", alternativeEmails: ["a@x.org", "b@x.org"], fields: { plan: "pro" } },
    });
    expect(readRow(columns, ["m1", "", "", "", ""], check)).toStrictEqual({ input: { id: "m1" } });
  });

  it("reads a cell of spaces as an absent address, not as an empty one", () => {
    expect(readRow(columns, ["m1", "   ", " ; ", "", ""], check)).toStrictEqual({ input: { id: "m1" } });
    expect(readRow(columns, ["", "   ", "a@x.org", "", ""], check)).toStrictEqual({
      rejected: "has neither an id nor an email",
    });
    expect(readRow(columns, [" ", "", "", "", ""], check)).toStrictEqual({ input: { id: " " } });
  });

  it.for([
    [["m1", "", "", ""], "expected 5 columns, found 4"],
    [["", "", "", "Acme", ""], "has neither an id nor an email"],
    [["", "ada@", "", "", ""], "email: not a valid e-mail address"],
    [["", `${"a".repeat(250)}@x.org`, "", "", ""], "email: longer than 254 characters"],
    [["bad\u0007id", "", "", "", ""], "id: holds a control character"],
    [["m1", "", "x@y.org;nope", "", ""], 'alternativeEmails: "nope" is not a valid e-mail address'],
    [["m1", "", Array(21).fill("x@y.org").join(";"), "", ""], "alternativeEmails: more than 20 addresses"],
    [["m1", "", "", "c".repeat(1025), ""], "company: longer than 1024 characters"],
    [["m1", "", "", "", "a\u0000b"], "plan: holds a NUL character"],
  ] as const)("%j is rejected: %s", ([values, message]) => {
    expect(readRow(columns, [...values], check)).toEqual({ rejected: message });
  });

  it("refuses more than 50 fields, as the JSON API does", () => {
    const keys = Array.from({ length: 51 }, (_, i) => `k${i}`);
    const wide = readHeader(["id", ...keys]);
    expect(readRow(wide, ["m1", ...keys.map(() => "v")], check)).toEqual({ rejected: "more than 50 fields" });
  });

  it("treats a row of empty cells as blank", () => {
    expect(isBlank(["", "", ""])).toBe(true);
    expect(isBlank([""])).toBe(true);
    expect(isBlank(["", " "])).toBe(false);
  });
});
