import { describe, expect, it } from "vitest";
import { readOperations, writeOperations } from "../../src/contract/contract.ts";
import { documentedOperations, loadContract } from "../support/contract.ts";

// Reads on replicas (DATABASE_READ_URLS) tell reads from writes by the contract: a read takes the
// Consistency-Token header, a write's success answers declare it. An operation added without
// either would be served as a write (on the primary, answering a token): this keeps each new
// one classified on purpose.
const PROBES = new Set(["getHealth", "getReadiness"]);
// The reads that POST their question (a rule, a list of audiences).
const POSTED_READS = ["previewAudience", "previewAudienceFilterChange", "explainDraftMembership", "audienceOverlap"];

describe("the Consistency-Token in the contract", () => {
  const { document } = loadContract();
  const operation = (path: string, method: string) => document.paths[path][method.toLowerCase()];
  const served = documentedOperations().filter(({ operationId }) => !PROBES.has(operationId));

  it("is a parameter of every GET but the probes, and of the reads that POST", () => {
    const expected = served
      .filter(({ method, operationId }) => method.toLowerCase() === "get" || POSTED_READS.includes(operationId))
      .map(({ operationId }) => operationId);
    expect([...readOperations()].sort()).toEqual(expected.sort());
  });

  it("makes every other operation but the probes a write, and the probes neither", () => {
    const writes = served.filter(({ operationId }) => !readOperations().has(operationId)).map((o) => o.operationId);
    expect([...writeOperations()].sort()).toEqual(writes.sort());
    for (const probe of PROBES) expect(readOperations().has(probe) || writeOperations().has(probe)).toBe(false);
  });

  it.each(served.filter(({ operationId }) => !readOperations().has(operationId)))(
    "is declared on each success answer of $operationId, a write",
    ({ path, method }) => {
      const responses = operation(path, method).responses as Record<string, { headers?: Record<string, unknown> }>;
      const successes = Object.entries(responses).filter(([status]) => status.startsWith("2"));
      expect(successes.length).toBeGreaterThan(0);
      for (const [, response] of successes) {
        expect(response.headers?.["Consistency-Token"]).toEqual({ $ref: "#/components/headers/ConsistencyToken" });
      }
    },
  );
});
