import { type AudienceClient, createAudienceClient, type Problem, type paths } from "@audience-service/client";
import createQueryHooks, { type OpenapiQueryClient } from "openapi-react-query";
import { createContext, type ReactNode, useContext, useMemo } from "react";
import type { Session } from "./session.ts";

/** What every screen works with: the typed SDK, its TanStack Query hooks, and the signed-in workspace. */
export interface Api {
  client: AudienceClient;
  /**
   * useQuery / useMutation bound to the contract's paths (openapi-react-query on the SDK's client),
   * answers typed as JSON: the hooks never ask for another media type (files are downloaded
   * through the SDK's client, csv-download.tsx).
   */
  $api: OpenapiQueryClient<paths, "application/json">;
  workspaceId: string;
  /** `{ params: { path: { workspaceId } } }`, the init of every workspace operation without other parameters. */
  inWorkspace: { params: { path: { workspaceId: string } } };
  signOut(): void;
}

const ApiContext = createContext<Api | undefined>(undefined);

export function ApiProvider({
  session,
  signOut,
  children,
}: {
  session: Session;
  signOut(): void;
  children: ReactNode;
}) {
  const api = useMemo<Api>(() => {
    const client = createAudienceClient({ baseUrl: window.location.origin, apiKey: session.apiKey });
    const { workspaceId } = session;
    return {
      client,
      $api: createQueryHooks(client.raw),
      workspaceId,
      inWorkspace: { params: { path: { workspaceId } } },
      signOut,
    };
  }, [session, signOut]);
  return <ApiContext.Provider value={api}>{children}</ApiContext.Provider>;
}

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error("useApi outside ApiProvider");
  return api;
}

function isProblem(value: unknown): value is Problem {
  return typeof value === "object" && value !== null && "code" in value && "status" in value;
}

/**
 * The problem document of a failed call, whether it came from openapi-react-query (the body) or
 * the SDK (an ApiError carrying it); undefined for a failure without one (the network).
 */
export function problemOf(error: unknown): Problem | undefined {
  if (isProblem(error)) return error;
  if (typeof error === "object" && error !== null && "problem" in error && isProblem(error.problem)) {
    return error.problem;
  }
  return undefined;
}

/** What to show a person for a failed call: the API's own `detail` (or title). */
export function problemText(error: unknown): string {
  const problem = problemOf(error);
  if (problem) return problem.detail ?? problem.title;
  if (error instanceof Error) return error.message;
  return "The request failed.";
}
