import type { components } from "../../../generated/api.d.ts";

type Schemas = components["schemas"];

export interface HistoryQuery {
  interval?: "hour" | "day" | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** Audiences' sizes: how they overlap, how they changed. */
export function createSizeInsight() {
  return {
    async overlap(_workspaceId: string, _audienceIds: string[]): Promise<Schemas["Overlap"]> {
      throw new Error("not built yet");
    },
    async history(
      _workspaceId: string,
      _audienceId: string,
      _query: HistoryQuery,
    ): Promise<Schemas["AudienceHistory"]> {
      throw new Error("not built yet");
    },
  };
}

export type SizeInsight = ReturnType<typeof createSizeInsight>;
