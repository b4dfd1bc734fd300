import { describe, expect, it } from "vitest";
import { documentedOperations, loadContract } from "../support/contract.ts";

// Any operation can meet a database that is down, slow or saturated, and any request can trickle:
// every operation documents 503 (with Retry-After) and 408, so clients are told to expect them.
describe("every operation of the contract", () => {
  const { document } = loadContract();
  const responses = (path: string, method: string) => document.paths[path][method.toLowerCase()].responses;

  it.each(documentedOperations())(
    "$operationId documents 503 service_unavailable and 408 request_timeout",
    ({ path, method }) => {
      expect(responses(path, method)["503"]).toEqual({ $ref: "#/components/responses/ServiceUnavailable" });
      expect(responses(path, method)["408"]).toEqual({ $ref: "#/components/responses/RequestTimeout" });
    },
  );

  it("says when to retry a 503", () => {
    expect(document.components.responses.ServiceUnavailable.headers["Retry-After"].required).toBe(true);
    expect(document.components.schemas.Problem.properties.code.enum).toEqual(
      expect.arrayContaining(["service_unavailable", "request_timeout"]),
    );
  });
});
