import type { components } from "../../generated/api.d.ts";
import { decodeCursor, encodeCursor } from "../domain/cursor.ts";
import { audienceArchived, audienceNotFound, BadRequestError } from "../domain/errors.ts";
import { withNamedFields } from "../domain/member-merge.ts";
import { audienceRepo } from "../store/audience-repo.ts";
import type { Store, Tx } from "../store/database.ts";
import { type MemberRow, memberRepo } from "../store/member-repo.ts";
import { membershipRepo } from "../store/membership-repo.ts";
import { resolveMemberInputs } from "./member-resolution.ts";

type Schemas = components["schemas"];

/** The most members one add or remove request may name, in memberIds and members together. */
export const MAX_MEMBERS_PER_REQUEST = 10_000;

export interface MemberPageQuery {
  limit?: number | undefined;
  after?: string | undefined;
  before?: string | undefined;
  sortDirection?: "ASC" | "DESC" | undefined;
  search?: string | undefined;
}

export function createAudienceMemberService({ store }: { store: Store }) {
  /** Locks the audience for a membership write; it must exist and be unarchived. */
  async function lockWritable(tx: Tx, workspaceId: string, audienceId: string) {
    const audience = (await audienceRepo.lock(tx, workspaceId, [audienceId], "update")).get(audienceId);
    if (!audience) throw audienceNotFound(audienceId);
    if (audience.isArchived) throw audienceArchived(audienceId);
    return audience;
  }

  return {
    add(
      workspaceId: string,
      audienceId: string,
      request: Schemas["AddMembersRequest"],
    ): Promise<Schemas["AddMembersResult"]> {
      const bareIds = [...new Set(request.memberIds ?? [])];
      const inputs = request.members ?? [];
      const total = (request.memberIds?.length ?? 0) + inputs.length;
      if (total === 0) {
        throw new BadRequestError("invalid_request", "Send at least one member in memberIds or members.", [
          { pointer: "/body", message: "must hold at least one member in memberIds or members" },
        ]);
      }
      if (total > MAX_MEMBERS_PER_REQUEST) {
        throw new BadRequestError(
          "too_many_items",
          `A request may name at most ${MAX_MEMBERS_PER_REQUEST} members; this one names ${total}.`,
        );
      }
      return store.transaction(async (tx) => {
        await lockWritable(tx, workspaceId, audienceId);
        // Members with data first, so an id also listed in memberIds is created with its data.
        const resolved = await resolveMemberInputs(tx, workspaceId, inputs);
        const createdBare = await memberRepo.insertBare(tx, workspaceId, bareIds);
        const memberIds = [...new Set([...resolved.memberIds, ...bareIds])];
        const added = await membershipRepo.include(tx, workspaceId, audienceId, memberIds);
        await audienceRepo.addToMemberCount(tx, workspaceId, audienceId, added);
        return {
          added,
          alreadyMembers: memberIds.length - added,
          created: resolved.created + createdBare,
          merged: resolved.merged,
        };
      });
    },

    remove(
      workspaceId: string,
      audienceId: string,
      request: Schemas["RemoveMembersRequest"],
    ): Promise<Schemas["RemoveMembersResult"]> {
      const memberIds = [...new Set(request.memberIds)];
      return store.transaction(async (tx) => {
        await lockWritable(tx, workspaceId, audienceId);
        const removed = await membershipRepo.exclude(tx, workspaceId, audienceId, memberIds);
        await audienceRepo.addToMemberCount(tx, workspaceId, audienceId, -removed);
        return { removed, notMembers: memberIds.length - removed };
      });
    },

    async list(workspaceId: string, audienceId: string, query: MemberPageQuery): Promise<Schemas["MemberPage"]> {
      if (query.after !== undefined && query.before !== undefined) {
        throw new BadRequestError("invalid_request", "Send either after or before, not both.", [
          { pointer: "/query/before", message: "cannot be combined with after" },
        ]);
      }
      const audience = await audienceRepo.find(store.db, workspaceId, audienceId);
      if (!audience) throw audienceNotFound(audienceId);
      const search = query.search?.trim() || undefined;
      const page = await membershipRepo.page(store.db, workspaceId, audienceId, {
        sortDirection: query.sortDirection ?? "DESC",
        limit: query.limit ?? 30,
        after: query.after === undefined ? undefined : decodeCursor(audienceId, query.after, "after"),
        before: query.before === undefined ? undefined : decodeCursor(audienceId, query.before, "before"),
        search,
      });
      const totalCount = search
        ? await membershipRepo.countMatching(store.db, workspaceId, audienceId, search)
        : audience.memberCount;
      const first = page.rows[0];
      const last = page.rows.at(-1);
      return {
        totalCount,
        pageInfo: {
          hasNextPage: page.hasNextPage,
          hasPreviousPage: page.hasPreviousPage,
          startCursor: first ? encodeCursor(audienceId, first) : "",
          endCursor: last ? encodeCursor(audienceId, last) : "",
        },
        results: page.rows.map(toMember),
      };
    },
  };
}

export function toMember(row: MemberRow): Schemas["Member"] {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    email: row.email,
    fields: withNamedFields(row.fields) as Schemas["Member"]["fields"],
    alternativeEmails: row.alternativeEmails ?? [],
  };
}

export type AudienceMemberService = ReturnType<typeof createAudienceMemberService>;
