// Request validation problems speak in words: every pattern of the contract has its words, and
// no message carries ajv's phrasing or a regular expression.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  type AjvError,
  PATTERN_WORDS,
  plainMessage,
  plainName,
  pointerToken,
} from "../../src/domain/validation-words.ts";

const contract = parse(readFileSync(new URL("../../openapi/openapi.yaml", import.meta.url), "utf8"));

function patternsIn(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) patternsIn(item, found);
  else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "pattern" && typeof value === "string") found.add(value);
      else patternsIn(value, found);
    }
  }
  return found;
}

const error = (keyword: string, params: Record<string, unknown>, extra: Partial<AjvError> = {}): AjvError => ({
  keyword,
  instancePath: "/name",
  schemaPath: "#",
  params,
  ...extra,
});

describe("validation words", () => {
  it("describe every pattern the contract holds", () => {
    const missing = [...patternsIn(contract)].filter((pattern) => PATTERN_WORDS[pattern] === undefined);
    expect(missing).toEqual([]);
  });

  it.for([
    [error("minLength", { limit: 1 }), "must not be empty"],
    [error("minLength", { limit: 3 }), "must be at least 3 characters long"],
    [error("maxLength", { limit: 200 }), "must be at most 200 characters long"],
    [error("maxItems", { limit: 10000 }), "must hold at most 10,000 items"],
    [error("minItems", { limit: 1 }), "must not be an empty list"],
    [error("maximum", { limit: 1000, comparison: "<=" }), "must be at most 1,000"],
    [error("type", { type: "array" }), "must be a list"],
    [error("type", { type: ["string", "null"] }), "must be text or null"],
    [error("enum", { allowedValues: ["ASC", "DESC"] }), 'must be one of "ASC", "DESC"'],
    [error("format", { format: "email" }), "must be an e-mail address"],
    [error("pattern", { pattern: "^[Hh][Tt][Tt][Pp][Ss]?://" }), "must be an http:// or https:// URL"],
    [error("pattern", { pattern: "^x+$" }), "is not in the accepted form"],
    [
      error("pattern", { pattern: "^[A-Za-z][A-Za-z0-9_]{0,63}$" }, { propertyName: "1st" }),
      'has the key "1st", which must be a field key: a letter, then at most 63 letters, digits or _',
    ],
    [error("minProperties", { limit: 1 }), "must not be empty: give at least one property"],
  ] as const)("say %j as %s", ([given, words]) => {
    expect(plainMessage(given)).toBe(words);
  });

  it("never leak a regular expression or ajv's phrasing", () => {
    for (const pattern of Object.keys(PATTERN_WORDS)) {
      const words = plainMessage(error("pattern", { pattern }));
      expect(words).not.toMatch(/[\^$\\]|\{\d|must NOT/);
    }
  });

  it.for([
    ["/body", "The body"],
    ["/body/name", "name"],
    ["/body/members/0/email", "members[0].email"],
    ["/body/fields/a~1b", "fields.a/b"],
    ["/query/limit", "The query parameter limit"],
    ["/headers/idempotency-key", "The header idempotency-key"],
  ] as const)("name the value at %s as %s", ([pointer, name]) => {
    expect(plainName(pointer)).toBe(name);
  });

  it("write a key as a pointer's token that names it back, ~ and / included", () => {
    expect(pointerToken("a/b~c")).toBe("a~1b~0c");
    expect(pointerToken("~1")).toBe("~01");
    expect(plainName(`/body/fields/${pointerToken("a/b~1c")}`)).toBe("fields.a/b~1c");
  });
});
