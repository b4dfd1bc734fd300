import type { components } from "../../generated/api.d.ts";
import { decodeCursor, encodeCursor } from "../domain/cursor.ts";
import { audienceNotFound, BadRequestError, memberNotFound } from "../domain/errors.ts";
import { emailKeysOf } from "../domain/member-merge.ts";
import { audienceRepo } from "../store/audience-repo.ts";
import type { Store } from "../store/database.ts";
import {
  audienceListing,
  countMatching,
  type PageRows,
  pageAudience,
  pageListing,
  workspaceListing,
} from "../store/member-page.ts";
import { memberRepo } from "../store/member-repo.ts";
import { membershipRepo } from "../store/membership-repo.ts";
import { workspaceRepo } from "../store/workspace-repo.ts";
import type { MemberPageQuery } from "./audience-member-service.ts";
import { resolveMemberInputs } from "./member-resolution.ts";
import { toMember } from "./member-view.ts";
import { syncRuleMemberships } from "./rule-sync.ts";

type Schemas = components["schemas"];

/** The workspace Members API: members independently of audiences. */
export function createMemberService({ store }: { store: Store }) {
  return {
    upsert(workspaceId: string, request: Schemas["UpsertMembersRequest"]): Promise<Schemas["UpsertMembersResult"]> {
      return store.transaction(async (tx) => {
        await workspaceRepo.lockMemberWrites(tx, workspaceId);
        const resolved = await resolveMemberInputs(tx, workspaceId, request.members);
        await syncRuleMemberships(tx, workspaceId, resolved.changedIds);
        return { results: resolved.outcomes };
      });
    },

    async get(workspaceId: string, memberId: string): Promise<Schemas["Member"]> {
      const row = await memberRepo.find(store.db, workspaceId, memberId);
      if (!row) throw memberNotFound(memberId);
      return toMember(row);
    },

    /** Merges the patch like an upsert; a field set to null is removed. */
    update(workspaceId: string, memberId: string, patch: Schemas["MemberPatch"]): Promise<Schemas["Member"]> {
      return store.transaction(async (tx) => {
        await workspaceRepo.lockMemberWrites(tx, workspaceId);
        const [existing] = await memberRepo.findByIds(tx, workspaceId, [memberId]);
        if (!existing) throw memberNotFound(memberId);
        const fields: Record<string, string> = {};
        const removed: string[] = [];
        for (const [key, value] of Object.entries(patch.fields ?? {})) {
          if (value === null) removed.push(key);
          else fields[key] = value;
        }
        // An explicit edit: the e-mail sent becomes the primary even if it was an alternative.
        const input = { id: memberId, fields, ...(patch.email ? { email: patch.email, setPrimary: true } : {}) };
        await resolveMemberInputs(tx, workspaceId, [{ ...input, alternativeEmails: patch.alternativeEmails ?? [] }]);
        if (removed.length > 0) {
          const [merged] = await memberRepo.findByIds(tx, workspaceId, [memberId]);
          const data = { ...(merged ?? existing) };
          data.fields = Object.fromEntries(Object.entries(data.fields).filter(([key]) => !removed.includes(key)));
          await memberRepo.updateData(tx, workspaceId, [{ id: memberId, data }]);
          await memberRepo.releaseEmails(tx, workspaceId, memberId, emailKeysOf(data));
        }
        await syncRuleMemberships(tx, workspaceId, [memberId]);
        const [after] = await memberRepo.findByIds(tx, workspaceId, [memberId]);
        return toMember(after ?? existing);
      });
    },

    remove(workspaceId: string, request: Schemas["RemoveMembersRequest"]): Promise<Schemas["DeleteMembersResult"]> {
      const memberIds = [...new Set(request.memberIds)];
      return store.transaction(async (tx) => {
        await workspaceRepo.lockMemberWrites(tx, workspaceId);
        // Any audience may hold them (archived ones too), so every one is locked before its sets change.
        await audienceRepo.lockAll(tx, workspaceId);
        const deleted = await memberRepo.delete(tx, workspaceId, memberIds);
        const losses = await membershipRepo.forget(
          tx,
          workspaceId,
          deleted.map((m) => m.seq),
        );
        await audienceRepo.addToMemberCounts(tx, workspaceId, new Map([...losses].map(([id, n]) => [id, -n])));
        return { deleted: deleted.length, notFound: memberIds.length - deleted.length };
      });
    },

    list: (workspaceId: string, query: MemberPageQuery & { audienceId?: string | undefined }) =>
      listMemberPage(store, workspaceId, query),

    async audiences(workspaceId: string, memberId: string): Promise<Schemas["MemberAudienceList"]> {
      if (!(await memberRepo.find(store.db, workspaceId, memberId))) throw memberNotFound(memberId);
      return { results: await membershipRepo.memberAudiences(store.db, workspaceId, memberId) };
    },
  };
}

/**
 * One page of a workspace's members, or of one audience's. Cursors belong to one listing (the
 * audience, or the whole workspace) and are refused by any other.
 */
export async function listMemberPage(
  store: Store,
  workspaceId: string,
  query: MemberPageQuery & { audienceId?: string | undefined },
): Promise<Schemas["MemberPage"]> {
  if (query.after !== undefined && query.before !== undefined) {
    throw new BadRequestError("invalid_request", "Send either after or before, not both.", [
      { pointer: "/query/before", message: "cannot be combined with after" },
    ]);
  }
  const audienceId = query.audienceId;
  // A workspace listing's cursors name the workspace, so another workspace's are refused.
  const scope = audienceId ?? `members:${workspaceId}`;
  const search = query.search?.trim() || undefined;
  const pageQuery = {
    sortDirection: query.sortDirection ?? "DESC",
    limit: query.limit ?? 30,
    after: query.after === undefined ? undefined : decodeCursor(scope, query.after, "after"),
    before: query.before === undefined ? undefined : decodeCursor(scope, query.before, "before"),
    search,
  } as const;
  const listing = audienceId === undefined ? workspaceListing(workspaceId) : audienceListing(workspaceId, audienceId);
  let page: PageRows;
  let totalCount: number;
  if (audienceId !== undefined && !search) {
    // The page and the audience's stored size come from its member bitset in one go.
    const paged = await pageAudience(store.db, workspaceId, audienceId, pageQuery);
    if (paged.memberCount === null) throw audienceNotFound(audienceId);
    page = paged;
    totalCount = paged.memberCount;
  } else {
    // An unknown audience matches nobody, so its page is empty, and the answer is 404 all the same.
    const [exists, rows] = await Promise.all([
      audienceId === undefined ? true : audienceRepo.findCount(store.db, workspaceId, audienceId),
      pageListing(store.db, listing, pageQuery),
    ]);
    if (!exists) throw audienceNotFound(audienceId as string);
    page = rows;
    totalCount = await countMatching(store.db, listing, search ?? "");
  }
  const first = page.rows[0];
  const last = page.rows.at(-1);
  return {
    totalCount,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: first ? encodeCursor(scope, first) : "",
      endCursor: last ? encodeCursor(scope, last) : "",
    },
    results: page.rows.map(toMember),
  };
}

export type MemberService = ReturnType<typeof createMemberService>;
