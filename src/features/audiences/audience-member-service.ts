import type { components } from "../../../generated/api.d.ts";
import { BadRequestError } from "../../domain/errors.ts";
import { sizeOf } from "../membership/member-set.ts";
import type { MembershipService } from "../membership/membership-service.ts";
import type { MemberPageQuery, MemberPages } from "../membership/pages/member-pages.ts";
import { type MemberWrites, resolveMemberInputs } from "../membership/upsert/member-resolution.ts";

type Schemas = components["schemas"];

/** The most members one add or remove request may name, in memberIds and members together. */
export const MAX_MEMBERS_PER_REQUEST = 10_000;

export interface AudienceMemberDeps {
  membership: Pick<MembershipService, "workspaceWrite">;
  members: MemberWrites;
  pages: MemberPages;
  /** The audience's members at an instant (the history feature's membersAsOf). */
  membersAsOf: (
    workspaceId: string,
    audienceId: string,
    query: MemberPageQuery & { asOf: string },
  ) => Promise<Schemas["MemberPage"]>;
  /** The bound a file of the audience's members at an instant is read before (the history feature's fileBound). */
  fileBound: (workspaceId: string, audienceId: string, asOf: string, search?: string) => Promise<Date>;
}

/** Adding, removing and listing the members of one audience. */
export function createAudienceMemberService({
  membership,
  members,
  pages,
  membersAsOf,
  fileBound,
}: AudienceMemberDeps) {
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
      return membership.workspaceWrite(workspaceId, { memberWrites: true, lockWithFirstRead: true }, async (w) => {
        const { seqs: bareSeqs, ruled } = await w.writableWithSeqs(audienceId, bareIds);
        // An id also listed in members is created with its data.
        const resolved = await resolveMemberInputs(members, w.tx, workspaceId, inputs, bareIds, { bareSeqs });
        w.publish(...resolved.events);
        const memberIds = [...new Set([...resolved.memberIds, ...bareIds])];
        // Members created or changed follow the rules; with no rule-based audience (read with the
        // lock, and rules change only under it) or no such member, the addition is the write's last.
        const follow = ruled === false ? [] : [...resolved.changedIds, ...resolved.createdBare];
        const added = sizeOf((await w.include(audienceId, resolved.seqs, { last: follow.length === 0 })).entered);
        // After the include: a member added by hand is in this audience whatever its rule says.
        await w.followMembers(follow);
        return {
          added,
          alreadyMembers: memberIds.length - added,
          created: resolved.created + resolved.createdBare.length,
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
      // The member lock: the audiences whose rules name this one follow it in the same write.
      return membership.workspaceWrite(workspaceId, { memberWrites: true, lockWithFirstRead: true }, async (w) => {
        await w.writable(audienceId);
        const removed = sizeOf((await w.exclude(audienceId, memberIds, { last: true })).left);
        return { removed, notMembers: memberIds.length - removed };
      });
    },

    /** A page of the audience's members now, or at `asOf` (from the membership record). */
    list: (workspaceId: string, audienceId: string, query: MemberPageQuery & { asOf?: string | undefined }) => {
      const { asOf, ...now } = query;
      return asOf === undefined
        ? pages.list(workspaceId, { ...now, audienceId })
        : membersAsOf(workspaceId, audienceId, { ...now, asOf });
    },

    /**
     * For a file of the audience's members at `asOf`: the instant checked as a page's is, before
     * any byte is sent, as the bound the export reads the record before.
     */
    fileBound,
  };
}

export type AudienceMemberService = ReturnType<typeof createAudienceMemberService>;
