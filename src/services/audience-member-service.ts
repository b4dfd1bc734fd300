import type { components } from "../../generated/api.d.ts";
import { BadRequestError } from "../domain/errors.ts";
import { audienceRepo } from "../store/audience-repo.ts";
import type { Store } from "../store/database.ts";
import { membershipRepo } from "../store/membership-repo.ts";
import { workspaceRepo } from "../store/workspace-repo.ts";
import { lockWritable } from "./audience-service.ts";
import { resolveMemberInputs } from "./member-resolution.ts";
import { listMemberPage } from "./member-service.ts";
import { syncRuleMemberships } from "./rule-sync.ts";

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
        await workspaceRepo.lockMemberWrites(tx, workspaceId);
        await lockWritable(tx, workspaceId, audienceId);
        // An id also listed in members is created with its data.
        const resolved = await resolveMemberInputs(tx, workspaceId, inputs, bareIds);
        const createdBare = resolved.createdBare;
        const memberIds = [...new Set([...resolved.memberIds, ...bareIds])];
        const added = await membershipRepo.include(tx, workspaceId, audienceId, resolved.seqs);
        await audienceRepo.addToMemberCount(tx, workspaceId, audienceId, added);
        // After the include entries: a member added by hand is in this audience whatever its rule says.
        await syncRuleMemberships(tx, workspaceId, [...resolved.changedIds, ...createdBare]);
        return {
          added,
          alreadyMembers: memberIds.length - added,
          created: resolved.created + createdBare.length,
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

    list: (workspaceId: string, audienceId: string, query: MemberPageQuery) =>
      listMemberPage(store, workspaceId, { ...query, audienceId }),
  };
}

export type AudienceMemberService = ReturnType<typeof createAudienceMemberService>;
