import type { components } from "../../../generated/api.d.ts";
import { decodeCursor, encodeCursor } from "../../domain/cursor.ts";
import { audienceLabel, audienceNotFound, BadRequestError, ConflictError } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import { normalizeName } from "../../domain/names.ts";
import type { Store } from "../../platform/db/database.ts";
import type { AudienceRepo } from "../membership/audience-repo.ts";
import type { FilterPreviewRepo } from "../membership/filter-preview-repo.ts";
import { countDelta } from "../membership/member-set.ts";
import { toMember } from "../membership/member-view.ts";
import type { MembershipService } from "../membership/membership-service.ts";
import type { FieldTypeRepo } from "../membership/rules/field-type-repo.ts";
import { audiencesOf, type Filter, parseFilter, unionFilter } from "../membership/rules/filter.ts";
import type { FilterCostCheck } from "../membership/rules/filter-cost.ts";
import { filterNodes, filterWarnings } from "../membership/rules/filter-explain.ts";
import type { RuleRepo } from "../membership/rules/rule-repo.ts";
import type { AudienceCache } from "./audience-cache.ts";
import {
  checkMergedRule,
  checkNamedAudiences,
  checkPreviewAudiences,
  checkRestoredRule,
  checkWorkspaceBounds,
} from "./audience-conditions.ts";

type Schemas = components["schemas"];

export interface ListAudiencesQuery {
  includeArchived?: boolean | undefined;
  search?: string | undefined;
  sortDirection?: "ASC" | "DESC" | undefined;
  limit?: number | undefined;
  after?: string | undefined;
  include?: "stats" | undefined;
}

export interface AudienceServiceDeps {
  store: Pick<Store, "kind" | "db" | "primaryDb">;
  cache: AudienceCache;
  membership: Pick<MembershipService, "workspaceWrite">;
  audiences: Pick<
    AudienceRepo,
    "create" | "find" | "findName" | "findWithStats" | "list" | "archive" | "restore" | "rename"
  >;
  preview: FilterPreviewRepo;
  fieldTypes: Pick<FieldTypeRepo, "types" | "unheld">;
  rules: Pick<RuleRepo, "rules">;
  /** Refuses a filter too costly to evaluate over the workspace (filter-cost.ts). */
  checkCost: FilterCostCheck;
  /** ACTIVITY_RETENTION_DAYS: activity conditions' windows stay within it, and count no further back. */
  activityRetentionDays?: number | undefined;
}

export function createAudienceService({
  store,
  cache,
  membership,
  audiences,
  preview,
  fieldTypes,
  rules,
  checkCost,
  activityRetentionDays,
}: AudienceServiceDeps) {
  return {
    create(workspaceId: string, rawName: string): Promise<Schemas["AudienceRef"]> {
      const name = normalizeName(rawName);
      return membership.workspaceWrite(workspaceId, { memberWrites: false }, async (w) => {
        const audience = await audiences.create(w.tx, { workspaceId, id: newId("aud"), name });
        w.publish({ type: "audience.created", audienceId: audience.id, name });
        return { id: audience.id };
      });
    },

    async get(workspaceId: string, id: string, include?: "stats"): Promise<Schemas["Audience"]> {
      if (include === "stats") {
        // Sizes change with every write: read fresh, never from (or into) the cache of names.
        const audience = await audiences.findWithStats(store.db, workspaceId, id);
        if (!audience) throw audienceNotFound(id);
        return audience;
      }
      // Filled from the primary: a name a replica has not caught up on, once cached, would be
      // served to a client that sends the token of the rename.
      const audience = await cache.read(workspaceId, id, () => audiences.findName(store.primaryDb, workspaceId, id));
      if (!audience) throw audienceNotFound(id);
      return { id: audience.id, name: audience.name };
    },

    async list(workspaceId: string, query: ListAudiencesQuery): Promise<Schemas["AudienceList"]> {
      const sortDirection = query.sortDirection ?? "DESC";
      // A cursor names a place in one order: a cursor of the other direction is refused.
      const scope = `audiences:${sortDirection}`;
      if (query.after !== undefined && query.limit === undefined) {
        throw new BadRequestError("invalid_request", "after needs limit: paging starts with a page size.", [
          { pointer: "/query/after", message: "is allowed only with limit" },
        ]);
      }
      const after = query.after === undefined ? undefined : decodeCursor(scope, query.after, "after");
      const rows = await audiences.list(store.db, workspaceId, {
        includeArchived: query.includeArchived ?? false,
        search: query.search,
        sortDirection,
        after,
        // One more than asked tells whether there is a next page.
        limit: query.limit === undefined ? undefined : query.limit + 1,
        stats: query.include === "stats",
      });
      const results = query.limit === undefined ? rows : rows.slice(0, query.limit);
      if (query.limit === undefined) return { results };
      const last = results.at(-1);
      return {
        results,
        pageInfo: {
          hasNextPage: rows.length > results.length,
          endCursor: last ? encodeCursor(scope, { createdAt: new Date(last.createdAt), id: last.id }) : "",
        },
      };
    },

    /** Archives the audience; archiving an archived one changes nothing. */
    archive(workspaceId: string, id: string): Promise<void> {
      return membership.workspaceWrite(workspaceId, { memberWrites: false }, async (w) => {
        const audience = await w.locks.audience(id);
        if (!audience) throw audienceNotFound(id);
        if (audience.isArchived) return;
        // Under the audience's lock, which a rule naming it takes to be stored: no such rule commits meanwhile.
        const users = (await rules.rules(w.tx, workspaceId)).filter(
          (rule) => !rule.isArchived && audiencesOf(rule.filter).includes(id),
        );
        if (users.length > 0) {
          // Named as a person knows them ("Name" (aud_…)), as field_in_use does; the ids stay in audienceIds.
          const labels = users.map((rule) => audienceLabel(rule.id, rule.name)).join(", ");
          throw new ConflictError(
            "audience_in_use",
            `The ${users.length === 1 ? "rule of audience" : "rules of audiences"} ${labels} name this audience; change them or archive them first.`,
            { audienceIds: users.map((rule) => rule.id) },
          );
        }
        await audiences.archive(w.tx, workspaceId, id);
        w.publish({ type: "audience.archived", audienceId: id });
      });
    },

    /**
     * Restores an archived audience. Under the member lock: the audiences its rule names are
     * locked (FOR SHARE) to be checked unarchived, so none is archived before this commits.
     */
    restore(workspaceId: string, id: string): Promise<Schemas["Audience"]> {
      return membership.workspaceWrite(workspaceId, { memberWrites: true }, async (w) => {
        const audience = await w.locks.audience(id);
        if (!audience) throw audienceNotFound(id);
        if (audience.isArchived) {
          await checkRestoredRule(w, audience.filter);
          await audiences.restore(w.tx, workspaceId, audience);
          w.publish({ type: "audience.restored", audienceId: id });
        }
        return { id: audience.id, name: audience.name };
      });
    },

    async rename(workspaceId: string, id: string, rawName: string): Promise<Schemas["Audience"]> {
      const name = normalizeName(rawName);
      try {
        return await membership.workspaceWrite(workspaceId, { memberWrites: false }, async (w) => {
          const audience = await w.locks.writable(id);
          if (audience.name !== name) {
            await audiences.rename(w.tx, workspaceId, { id, name });
            w.publish({ type: "audience.renamed", audienceId: id, name, previousName: audience.name });
          }
          return { id, name };
        });
      } finally {
        // Here at once; other processes hear of it from the database.
        cache.invalidate(workspaceId, id);
      }
    },

    async getFilter(workspaceId: string, id: string): Promise<Schemas["AudienceFilter"]> {
      const audience = await audiences.find(store.db, workspaceId, id);
      if (!audience) throw audienceNotFound(id);
      return { filter: audience.filter, memberCount: audience.memberCount };
    },

    /** Replaces the rule and recomputes the membership before answering. */
    setFilter(workspaceId: string, id: string, rawFilter: unknown): Promise<Schemas["AudienceFilter"]> {
      return membership.workspaceWrite(workspaceId, { memberWrites: true, lockWithFirstRead: true }, async (w) => {
        // Checked under the member lock, which a field's declaration takes too: the types the
        // rule is read with are the ones it is stored with. The member lock, the audience's, the
        // types, the rules (which check this one and follow its change) and the workspace's size:
        // one statement.
        const read = await w.readRuleChange(id);
        const { types } = read;
        const filter = rawFilter === null ? null : parseFilter(rawFilter, { types, activityRetentionDays });
        // A bad rule is told before an unknown or archived audience.
        const audience = read.writable();
        await checkNamedAudiences(w, id, filter);
        await checkCost(w.tx, workspaceId, filter, types, "rule", read.memberNumbers);
        await checkWorkspaceBounds(async () => read.rules ?? rules.rules(w.tx, workspaceId), id, filter);
        // The rule first, then who entered and left because of it.
        w.publish({ type: "audience.filter_changed", audienceId: id, filter });
        const change = await w.setRule(id, filter, types, { last: true });
        return { filter, memberCount: audience.memberCount + countDelta(change) };
      });
    },

    /** Counts and samples the members a filter matches, saving nothing; with nodeCounts, per node. */
    async preview(
      workspaceId: string,
      request: { filter: unknown; limit?: number; nodeCounts?: boolean },
    ): Promise<Schemas["PreviewResult"]> {
      const types = await fieldTypes.types(store.db, workspaceId);
      const filter = parseFilter(request.filter, { types, activityRetentionDays });
      await checkPreviewAudiences(filter, (id) => audiences.find(store.db, workspaceId, id));
      await checkCost(store.db, workspaceId, filter, types, request.nodeCounts === true ? "nodeCounts" : "preview");
      const context = { types, now: Date.now(), workspaceId, activityRetentionDays };
      const limit = request.limit ?? 30;
      // A key nobody holds counts 0 without a word otherwise: said beside the answer, never refused.
      const warnings = await filterWarnings(filter, (keys) => fieldTypes.unheld(store.db, workspaceId, keys));
      const warned = warnings.length > 0 ? { warnings } : {};
      if (request.nodeCounts !== true) {
        const { totalCount, rows } = await preview.matching(store.db, workspaceId, filter, context, limit);
        return { totalCount, results: rows.map(toMember), ...warned };
      }
      // The root's count is the total: one scan counts every node, and the page is read beside it.
      const nodes = filterNodes(filter);
      const [counts, { rows }] = await Promise.all([
        preview.nodeCounts(store.db, workspaceId, filter, context, store.kind),
        preview.matching(store.db, workspaceId, filter, context, limit, { count: false }),
      ]);
      return {
        totalCount: counts[0] ?? 0,
        results: rows.map(toMember),
        nodes: nodes.map((n, i) => ({ pointer: n.pointer, count: counts[i] ?? 0 })),
        ...warned,
      };
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
      return membership.workspaceWrite(workspaceId, { memberWrites: true }, async (w) => {
        const sources = await w.locks.sources(sourceIds);
        // The merged audience follows either source's rule from now on; members the rule matches
        // that are in neither source now are excluded, so it starts as exactly their union.
        const [first, second] = sourceIds.map((id): Filter | null => sources.get(id)?.filter ?? null);
        const filter = unionFilter(first ?? null, second ?? null);
        const mergedId = newId("aud");
        await checkMergedRule(w, mergedId, filter, () => rules.rules(w.tx, workspaceId));
        const merged = await audiences.create(w.tx, { workspaceId, id: mergedId, name, filter });
        w.publish(
          { type: "audience.created", audienceId: merged.id, name },
          { type: "audience.merged", audienceId: merged.id, sourceAudienceIds: sourceIds },
        );
        await w.copyUnion(merged.id, sourceIds);
        return { id: merged.id };
      });
    },

    /** A new audience holding the source's members at this moment, added by hand, with no rule. */
    snapshot(workspaceId: string, sourceId: string, rawName: string): Promise<Schemas["AudienceRef"]> {
      const name = normalizeName(rawName);
      return membership.workspaceWrite(workspaceId, { memberWrites: true }, async (w) => {
        await w.locks.sources([sourceId]);
        const snapshot = await audiences.create(w.tx, { workspaceId, id: newId("aud"), name });
        w.publish({ type: "audience.created", audienceId: snapshot.id, name });
        await w.snapshot(snapshot.id, sourceId);
        return { id: snapshot.id };
      });
    },
  };
}

export type AudienceService = ReturnType<typeof createAudienceService>;
