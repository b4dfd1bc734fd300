import { ApiError, type AudienceClient, createAudienceClient, type paths } from "../index.js";
import type { CliConfig } from "./config.js";

/** The typed SDK for JSON operations, plus raw requests for the ones whose bodies are streamed files. */
export interface Service {
  config: CliConfig;
  api: AudienceClient;
  /**
   * Sends one request to a contract path (its {parameters} filled from params) with the API key,
   * and resolves to the response once its headers arrive, its body unread; an error status rejects
   * with the SDK's ApiError, carrying the problem document.
   */
  stream(
    path: keyof paths,
    params: Record<string, string>,
    init: RequestInit & { query?: Record<string, string | undefined> },
  ): Promise<Response>;
}

export function connect(config: CliConfig): Service {
  const api = createAudienceClient({ baseUrl: config.baseUrl, apiKey: config.apiKey });
  return {
    config,
    api,
    async stream(path, params, { query = {}, headers, ...init }) {
      const url = new URL(
        config.baseUrl + path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? "")),
      );
      for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, value);
      // Uploads and files pass the client's Consistency-Token on, as the SDK's calls do.
      const token = api.consistency.token;
      const response = await fetch(url, {
        ...init,
        headers: {
          ...(token === undefined ? {} : { "consistency-token": token }),
          ...(headers as Record<string, string>),
          authorization: `Bearer ${config.apiKey}`,
        },
      });
      api.consistency.track(response);
      if (!response.ok) throw new ApiError(response, await readErrorBody(response));
      return response;
    },
  };
}

async function readErrorBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => "");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
