import { ApiError, type AudienceClient, createAudienceClient } from "@audience-service/client";
import { checkResponse, documentedOperations, loadContract } from "./contract.ts";

/** "METHOD /path/template" of every operation called through clients made by checkedClient(). */
export const operationsCalled = new Set<string>();

/**
 * The SDK as a consumer uses it, plus one openapi-fetch middleware that checks every response
 * against the contract (as call() in live-server.ts does) and records which operation was called.
 * Without an apiKey the client sends no Authorization header at all.
 */
export function checkedClient(baseUrl: string, apiKey: string | undefined): AudienceClient {
  const api = createAudienceClient({ baseUrl, apiKey: apiKey ?? "" });
  api.raw.use({
    onRequest({ request }) {
      if (apiKey === undefined) request.headers.delete("authorization");
    },
    async onResponse({ request, response, schemaPath }) {
      operationsCalled.add(`${request.method} ${schemaPath}`);
      const url = new URL(request.url);
      checkResponse({
        method: request.method,
        url: url.pathname + url.search,
        status: response.status,
        headers: Object.fromEntries(response.headers.entries()),
        body: await response.clone().text(),
      });
    },
  });
  return api;
}

/**
 * The ApiError a call rejects with, for asserting on its status, code and problem document.
 * Fails if the call succeeds; rethrows any other rejection (a contract violation among them).
 */
export async function rejectionOf(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

/**
 * "METHOD /path" of every operation of the contract under one of these tags: what an SDK test
 * file must have called through checked clients (compare with operationsCalled).
 */
export function operationsTagged(tags: string[]): string[] {
  const { document } = loadContract();
  return documentedOperations()
    .filter(({ method, path }) => tags.includes(document.paths[path][method.toLowerCase()].tags?.[0]))
    .map(({ method, path }) => `${method} ${path}`)
    .sort();
}

/** Which of these operations no checked client has called in this file. */
export const notCalled = (expected: string[]) => expected.filter((operation) => !operationsCalled.has(operation));
