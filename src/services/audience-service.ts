import type { components } from "../../generated/api.d.ts";
import { audienceArchived, audienceNotFound, BadRequestError } from "../domain/errors.ts";
import { parseFilter, unionFilter } from "../domain/filter.ts";
import { newId } from "../domain/ids.ts";
import { normalizeName } from "../domain/names.ts";
import { type AudienceRow, audienceRepo } from "../store/audience-repo.ts";
import type { Store, Tx } from "../store/database.ts";
import { memberRepo } from "../store/member-repo.ts";
import { membershipRepo } from "../store/membership-repo.ts";
import { workspaceRepo } from "../store/workspace-repo.ts";
import type { AudienceCache } from "./audience-cache.ts";
import { toMember } from "./member-view.ts";
import { applyRule } from "./rule-sync.ts";

type Schemas = components["schemas"];

export interface ListAudiencesQuery {
  includeArchived?: boolean | undefined;
  search?: string | undefined;
  sortDirection?: "ASC" | "DESC" | undefined;
}

/** Locks the audience for a change; it must exist and be unarchived. */
export async function lockWritable(tx: Tx, workspaceId: string, id: string): Promise<AudienceRow> {
  const audience = (await audienceRepo.lock(tx, workspaceId, [id], "update")).get(id);
  if (!audience) throw audienceNotFound(id);
  if (audience.isArchived) throw audienceArchived(id);
  return audience;
}

export function createAudienceService({ store, cache }: { store: Store; cache: AudienceCache }) {
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
      const audience = await cache.read(workspaceId, id, () => audienceRepo.findName(store.db, workspaceId, id));
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

    async rename(workspaceId: string, id: string, rawName: string): Promise<Schemas["Audience"]> {
      const name = normalizeName(rawName);
      try {
        return await store.transaction(async (tx) => {
          const audience = await lockWritable(tx, workspaceId, id);
          if (audience.name !== name) await audienceRepo.rename(tx, workspaceId, { id, name });
          return { id, name };
        });
      } finally {
        // Here at once; other processes hear of it from the database.
        cache.invalidate(workspaceId, id);
      }
    },

    async getFilter(workspaceId: string, id: string): Promise<Schemas["AudienceFilter"]> {
      const audience = await audienceRepo.find(store.db, workspaceId, id);
      if (!audience) throw audienceNotFound(id);
      return { filter: audience.filter, memberCount: audience.memberCount };
    },

    /** Replaces the rule and recomputes the membership before answering. */
    setFilter(workspaceId: string, id: string, rawFilter: unknown): Promise<Schemas["AudienceFilter"]> {
      const filter = rawFilter === null ? null : parseFilter(rawFilter);
      return store.transaction(async (tx) => {
        // The member lock first: a member created meanwhile is either seen by the evaluation or
        // evaluated against the new rule by its own request afterwards.
        await workspaceRepo.lockMemberWrites(tx, workspaceId);
        const audience = await lockWritable(tx, workspaceId, id);
        const delta = await applyRule(tx, workspaceId, id, filter);
        return { filter, memberCount: audience.memberCount + delta };
      });
    },

    /** Counts and samples the members a filter matches, saving nothing. */
    async preview(
      workspaceId: string,
      request: { filter: unknown; limit?: number },
    ): Promise<Schemas["PreviewResult"]> {
      const filter = parseFilter(request.filter);
      const { totalCount, rows } = await memberRepo.matching(store.db, workspaceId, filter, request.limit ?? 30);
      return { totalCount, results: rows.map(toMember) };
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
        // The member lock: no member the union holds can be deleted before the new audience exists.
        await workspaceRepo.lockMemberWrites(tx, workspaceId);
        // FOR SHARE: the sources' members cannot change while they are copied.
        const sources = await audienceRepo.lock(tx, workspaceId, sourceIds, "share");
        for (const sourceId of sourceIds) {
          const source = sources.get(sourceId);
          if (!source) throw audienceNotFound(sourceId);
          if (source.isArchived) throw audienceArchived(sourceId);
        }
        // The merged audience follows either source's rule from now on; members the rule matches
        // that are in neither source now are excluded, so it starts as exactly their union.
        const [first, second] = sourceIds.map((id) => sources.get(id)?.filter ?? null);
        const filter = unionFilter(first ?? null, second ?? null);
        const merged = await audienceRepo.create(tx, { workspaceId, id: newId("aud"), name, filter });
        const count = await membershipRepo.copyUnion(tx, workspaceId, merged.id, sourceIds);
        await audienceRepo.addToMemberCount(tx, workspaceId, merged.id, count);
        return { id: merged.id };
      });
    },
  };
}

export type AudienceService = ReturnType<typeof createAudienceService>;
