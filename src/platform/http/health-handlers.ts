import type { Handlers } from "../../contract/handler-types.ts";
import { serviceUnavailable } from "../../domain/errors.ts";

/** Liveness and readiness; `ready` resolves when the database answers and its migrations are applied. */
export function createHealthHandlers({ ready }: { ready: () => Promise<void> }) {
  return {
    getHealth: async () => ({ status: "ok" as const }),
    async getReadiness() {
      try {
        await ready();
      } catch {
        throw serviceUnavailable("The database is not reachable, or its migrations are not applied.");
      }
      return { status: "ready" as const };
    },
  } satisfies Partial<Handlers>;
}
