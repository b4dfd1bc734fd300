import type { components } from "../../../generated/api.d.ts";
import { audienceNotFound, BadRequestError } from "../../domain/errors.ts";
import type { Store } from "../../platform/db/database.ts";
import type { InsightRepo } from "./insight-repo.ts";

type Schemas = components["schemas"];

export interface HistoryQuery {
  interval?: "hour" | "day" | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export interface SizeInsightDeps {
  store: Pick<Store, "db">;
  insight: Pick<InsightRepo, "overlap">;
}

/** Audiences' sizes: how they overlap, how they changed. */
export function createSizeInsight({ store, insight }: SizeInsightDeps) {
  return {
    async overlap(workspaceId: string, audienceIds: string[]): Promise<Schemas["Overlap"]> {
      // The contract's uniqueItems, checked here too so the answer does not depend on the validator.
      if (new Set(audienceIds).size !== audienceIds.length) {
        throw new BadRequestError("invalid_request", "audienceIds must name different audiences.", [
          { pointer: "/body/audienceIds", message: "must not contain duplicates" },
        ]);
      }
      const counts = await insight.overlap(store.db, workspaceId, audienceIds);
      const found = new Set(counts.audiences.map((a) => a.id));
      const unknown = audienceIds.find((id) => !found.has(id));
      if (unknown !== undefined) throw audienceNotFound(unknown);
      const byPair = new Map(counts.pairs.map((p) => [`${p.i}:${p.j}`, p.count]));
      const pairs: Schemas["Overlap"]["pairs"] = [];
      for (let i = 0; i < audienceIds.length; i++) {
        for (let j = i + 1; j < audienceIds.length; j++) {
          const ids = [audienceIds[i] as string, audienceIds[j] as string];
          pairs.push({ audienceIds: ids, count: byPair.get(`${i}:${j}`) ?? 0 });
        }
      }
      return { audiences: counts.audiences, pairs, all: counts.all };
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
