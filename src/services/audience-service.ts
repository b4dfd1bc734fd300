import type { components } from "../../generated/api.d.ts";
import { audienceArchived, audienceNotFound, BadRequestError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { normalizeName } from "../domain/names.ts";
import { audienceRepo } from "../store/audience-repo.ts";
import type { Store } from "../store/database.ts";
import { membershipRepo } from "../store/membership-repo.ts";

type Schemas = components["schemas"];

export interface ListAudiencesQuery {
  includeArchived?: boolean | undefined;
  search?: string | undefined;
  sortDirection?: "ASC" | "DESC" | undefined;
}

export function createAudienceService({ store }: { store: Store }) {
  return {
    async create(workspaceId: string, rawName: string): Promise<Schemas["AudienceRef"]> {
      const audience = await audienceRepo.create(store.db, {
        workspaceId,
        id: newId("aud"),
        name: normalizeName(rawName),
      });
      return { id: audience.id };
    },

    async get(workspaceId: string, id: string): Promise<Schemas["Audience"]> {
      const audience = await audienceRepo.find(store.db, workspaceId, id);
      if (!audience) throw audienceNotFound(id);
      return { id: audience.id, name: audience.name };
    },

    async list(workspaceId: string, query: ListAudiencesQuery): Promise<Schemas["AudienceList"]> {
      const rows = await audienceRepo.list(store.db, workspaceId, {
        includeArchived: query.includeArchived ?? false,
        search: query.search,
        sortDirection: query.sortDirection ?? "DESC",
      });
      return {
        results: rows.map((row) => ({
          id: row.id,
          createdAt: row.createdAt.toISOString(),
          name: row.name,
          isArchived: row.isArchived,
        })),
      };
    },

    async archive(workspaceId: string, id: string): Promise<void> {
      if (!(await audienceRepo.archive(store.db, workspaceId, id))) throw audienceNotFound(id);
    },

    restore(workspaceId: string, id: string): Promise<Schemas["Audience"]> {
      return store.transaction(async (tx) => {
        const audience = (await audienceRepo.lock(tx, workspaceId, [id], "update")).get(id);
        if (!audience) throw audienceNotFound(id);
        if (audience.isArchived) await audienceRepo.restore(tx, workspaceId, audience);
        return { id: audience.id, name: audience.name };
      });
    },

    /** A new audience equal to the union of two others at this moment; the sources are unchanged. */
    merge(workspaceId: string, request: Schemas["MergeAudiencesRequest"]): Promise<Schemas["AudienceRef"]> {
      const name = normalizeName(request.name);
      const sourceIds = request.audienceIds;
      if (new Set(sourceIds).size !== sourceIds.length) {
        throw new BadRequestError("invalid_request", "audienceIds must name two different audiences.", [
          { pointer: "/body/audienceIds", message: "must name two different audiences" },
        ]);
      }
      return store.transaction(async (tx) => {
        // FOR SHARE: the sources' members cannot change while they are copied.
        const sources = await audienceRepo.lock(tx, workspaceId, sourceIds, "share");
        for (const sourceId of sourceIds) {
          const source = sources.get(sourceId);
          if (!source) throw audienceNotFound(sourceId);
          if (source.isArchived) throw audienceArchived(sourceId);
        }
        const merged = await audienceRepo.create(tx, { workspaceId, id: newId("aud"), name });
        const count = await membershipRepo.copyUnion(tx, workspaceId, merged.id, sourceIds);
        await audienceRepo.addToMemberCount(tx, workspaceId, merged.id, count);
        return { id: merged.id };
      });
    },
  };
}

export type AudienceService = ReturnType<typeof createAudienceService>;
