// The CLI ships without the server, so it keeps its own copies of two of the server's rules (how a
// key names its workspace, how names compare); these hold the copies and the server's in step.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nameKey as cliNameKey } from "../../packages/client/src/cli/audience-lookup.ts";
import { workspaceOfKey } from "../../packages/client/src/cli/config.ts";
import { formatApiKey, parseApiKey } from "../../src/domain/api-key.ts";
import { nameKey } from "../../src/domain/names.ts";

const alphanumeric = (length: number) =>
  fc.string({
    unit: fc.constantFrom(..."0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    minLength: length,
    maxLength: length,
  });

describe("the CLI's copies of the server's rules", () => {
  it("reads a key's workspace as the server does, and refuses what the server refuses", () => {
    const key = fc
      .tuple(alphanumeric(20), alphanumeric(20), alphanumeric(32))
      .map(([workspace, keyId, secret]) =>
        formatApiKey({ workspaceId: `ws_${workspace}`, keyId: `key_${keyId}`, secret }),
      );
    // Keys, keys with a character changed or cut, and anything else.
    const text = fc.oneof(
      key,
      fc
        .tuple(key, fc.nat(), fc.string({ maxLength: 1 }))
        .map(([k, at, c]) => k.slice(0, at % k.length) + c + k.slice((at % k.length) + 1)),
      fc.string(),
    );
    fc.assert(
      fc.property(text, (token) => {
        expect(workspaceOfKey(token)).toBe(parseApiKey(token)?.workspaceId);
      }),
    );
  });

  it("compares names as the server does", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (name) => {
        expect(cliNameKey(name)).toBe(nameKey(name));
      }),
    );
    expect(cliNameKey("Caf\u0065\u0301 READERS")).toBe(cliNameKey("café readers"));
  });
});
