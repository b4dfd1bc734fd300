import type { FastifyReply, FastifyRequest } from "fastify";
import { describe, expect, it } from "vitest";
import type { Handlers } from "../../src/contract/handler-types.ts";
import { TooManyHeavyRequestsError } from "../../src/domain/errors.ts";
import { withHeavyLimit } from "../../src/platform/http/heavy-requests.ts";

type Call = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Handlers that run until let go: a heavy one and a light one. */
function gatedHandlers() {
  const gates: Array<() => void> = [];
  const gated = async () => {
    await new Promise<void>((resolve) => gates.push(resolve));
    return "done";
  };
  const handlers = { previewAudience: gated, getAudience: gated } as unknown as Handlers;
  const limited = withHeavyLimit(handlers, new Set(["previewAudience"]), 2) as unknown as Record<string, Call>;
  const call = (operation: string, keyId: string) =>
    (limited[operation] as Call)(
      { principal: { workspaceId: "ws_1", keyId } } as unknown as FastifyRequest,
      {} as FastifyReply,
    );
  return { call, release: () => gates.shift()?.() };
}

describe("the limit on heavy operations per API key", () => {
  it("refuses one more than perKey at once with Retry-After, for that key only", async () => {
    const { call, release } = gatedHandlers();
    const first = call("previewAudience", "key_a");
    const second = call("previewAudience", "key_a");
    const refused = await call("previewAudience", "key_a").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TooManyHeavyRequestsError);
    expect(refused).toMatchObject({ status: 429, code: "too_many_heavy_requests", retryAfterSeconds: 1 });
    // Another key, and an operation that is not heavy, are not held back.
    const other = call("previewAudience", "key_b");
    const light = call("getAudience", "key_a");
    for (let i = 0; i < 4; i++) release();
    expect(await Promise.all([first, second, other, light])).toEqual(["done", "done", "done", "done"]);
  });

  it("gives the place back when the work ends, whether it succeeded or failed", async () => {
    const failing = withHeavyLimit(
      {
        previewAudience: async () => {
          throw new Error("refused");
        },
      } as unknown as Handlers,
      new Set(["previewAudience"]),
      1,
    ) as unknown as Record<string, Call>;
    const request = { principal: { workspaceId: "ws_1", keyId: "key_a" } } as unknown as FastifyRequest;
    for (let i = 0; i < 3; i++) {
      await expect((failing.previewAudience as Call)(request, {} as FastifyReply)).rejects.toThrow("refused");
    }
  });
});
