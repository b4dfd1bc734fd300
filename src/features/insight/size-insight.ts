import type { components } from "../../../generated/api.d.ts";
import { audienceNotFound, BadRequestError } from "../../domain/errors.ts";
import { queryInstant } from "../../domain/query-instant.ts";
import type { Store } from "../../platform/db/database.ts";
import type { AudienceRepo } from "../membership/audience-repo.ts";
import { HISTORY_DAYS, type HistoryRepo } from "./history-repo.ts";
import type { OverlapRepo } from "./overlap-repo.ts";

type Schemas = components["schemas"];

export interface HistoryQuery {
  interval?: "hour" | "day" | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export interface SizeInsightDeps {
  store: Pick<Store, "db">;
  overlaps: Pick<OverlapRepo, "overlap">;
  history: Pick<HistoryRepo, "list">;
  audiences: Pick<AudienceRepo, "findCount">;
  /** The current time; a fixed clock in tests. */
  clock?: () => number;
}

const DAY_MS = 86_400_000;

/** Audiences' sizes: how they overlap, how they changed. */
export function createSizeInsight({ store, overlaps, history, audiences, clock = Date.now }: SizeInsightDeps) {
  return {
    async overlap(workspaceId: string, audienceIds: string[]): Promise<Schemas["Overlap"]> {
      // The contract's uniqueItems, checked here too so the answer does not depend on the validator.
      if (new Set(audienceIds).size !== audienceIds.length) {
        throw new BadRequestError("invalid_request", "audienceIds must name different audiences.", [
          { pointer: "/body/audienceIds", message: "must not contain duplicates" },
        ]);
      }
      const counts = await overlaps.overlap(store.db, workspaceId, audienceIds);
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

    async history(workspaceId: string, audienceId: string, query: HistoryQuery): Promise<Schemas["AudienceHistory"]> {
      const now = clock();
      const from = queryInstant(query.from, "from") ?? now - HISTORY_DAYS * DAY_MS;
      const to = queryInstant(query.to, "to") ?? now;
      if (from > to) {
        throw new BadRequestError("invalid_request", "from must not be later than to.", [
          { pointer: "/query/from", message: "must not be later than to" },
        ]);
      }
      // No row is older than the retention or newer than now: bounds beyond them (year 0, say,
      // which the database cannot hold) ask for nothing more.
      const range = {
        interval: query.interval ?? "day",
        from: new Date(Math.max(from, now - (HISTORY_DAYS + 2) * DAY_MS)),
        to: new Date(Math.min(to, now + DAY_MS)),
      } as const;
      if (range.from > range.to) {
        if (!(await audiences.findCount(store.db, workspaceId, audienceId))) throw audienceNotFound(audienceId);
        return { results: [] };
      }
      // The audience's existence is read with its rows (a round trip fewer).
      const rows = await history.list(store.db, workspaceId, audienceId, range);
      if (!rows) throw audienceNotFound(audienceId);
      return { results: rows };
    },
  };
}

export type SizeInsight = ReturnType<typeof createSizeInsight>;
