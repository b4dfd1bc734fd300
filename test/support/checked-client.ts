import { ApiError, type AudienceClient, createAudienceClient } from "../../src/client/index.ts";
import { checkResponse } from "./contract.ts";

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
