import type { components } from "../../../generated/api.d.ts";
import { memberNotFound } from "../../domain/errors.ts";
import { emailKeysOf, type MemberData } from "../../domain/member-merge.ts";
import type { Store } from "../../platform/db/database.ts";
import type { MemberRepo } from "../membership/member-repo.ts";
import { toMember } from "../membership/member-view.ts";
import type { MembershipRepo } from "../membership/membership-repo.ts";
import type { MembershipService } from "../membership/membership-service.ts";
import { changedKeys } from "../membership/outbox-entries.ts";
import type { MemberPageQuery, MemberPages } from "../membership/pages/member-pages.ts";
import { foldMember } from "../membership/rules/filter.ts";
import { candidatesOfInputs, type MemberWrites, resolveMemberInputs } from "../membership/upsert/member-resolution.ts";

type Schemas = components["schemas"];

export interface MemberServiceDeps {
  store: Pick<Store, "db">;
  membership: Pick<MembershipService, "workspaceWrite">;
  members: MemberWrites & Pick<MemberRepo, "find" | "delete" | "releaseEmails" | "updateDataSql">;
  memberAudiences: Pick<MembershipRepo, "memberAudiences">;
  pages: MemberPages;
  /** A member's audiences at an instant (the history feature's memberAudiencesAsOf). */
  audiencesAsOf: (workspaceId: string, memberId: string, asOf: string) => Promise<Schemas["MemberAudienceList"]>;
}

/** The workspace Members API: members independently of audiences. */
export function createMemberService({
  store,
  membership,
  members,
  memberAudiences,
  pages,
  audiencesAsOf,
}: MemberServiceDeps) {
  return {
    upsert(workspaceId: string, request: Schemas["UpsertMembersRequest"]): Promise<Schemas["UpsertMembersResult"]> {
      return membership.workspaceWrite(workspaceId, { memberWrites: true, lockWithFirstRead: true }, async (w) => {
        // The member lock and everything the inputs could match: one statement.
        const { ids, emailKeys } = candidatesOfInputs(request.members);
        const candidates = await w.readCandidates(ids, emailKeys, { rules: true });
        const resolved = await resolveMemberInputs(members, w.tx, workspaceId, request.members, [], {
          candidates,
          deferUpdates: true,
        });
        w.publish(...resolved.events);
        // The changed members' new data, written in the statement that moves their audiences, which
        // evaluates them as the candidates' read left them (created members are read after).
        const rows = new Map(candidates.rows.map((row) => [row.id, row]));
        const known = resolved.updates.flatMap(({ id, data }) => {
          const row = rows.get(id);
          return row ? [{ id, seq: row.seq, createdAt: row.createdAt, folded: foldMember({ id, ...data }) }] : [];
        });
        const writes = resolved.updates.length > 0 ? members.updateDataSql(workspaceId, resolved.updates) : undefined;
        await w.followMembers(resolved.changedIds, known, { read: candidates.rules, writes, last: true });
        return { results: resolved.outcomes };
      });
    },

    async get(workspaceId: string, memberId: string): Promise<Schemas["Member"]> {
      const row = await members.find(store.db, workspaceId, memberId);
      if (!row) throw memberNotFound(memberId);
      return toMember(row);
    },

    /** Merges the patch like an upsert; a field set to null is removed. */
    update(workspaceId: string, memberId: string, patch: Schemas["MemberPatch"]): Promise<Schemas["Member"]> {
      return membership.workspaceWrite(workspaceId, { memberWrites: true, lockWithFirstRead: true }, async (w) => {
        // The member lock, the member, the field types and everything its audiences' rules
        // evaluate: one statement.
        const read = await w.readMembers([memberId]);
        const [existing] = read.rows;
        if (!existing) throw memberNotFound(memberId);
        const fields: Record<string, string> = {};
        const removed: string[] = [];
        for (const [key, value] of Object.entries(patch.fields ?? {})) {
          if (value === null) removed.push(key);
          else fields[key] = value;
        }
        // An explicit edit: the e-mail sent becomes the primary even if it was an alternative.
        const input = { id: memberId, fields, ...(patch.email ? { email: patch.email, setPrimary: true } : {}) };
        const resolved = await resolveMemberInputs(
          members,
          w.tx,
          workspaceId,
          [{ ...input, alternativeEmails: patch.alternativeEmails ?? [] }],
          [],
          {
            known: [existing],
            types: read.types,
            deferUpdates: true,
            fieldPointer: (_index, key) => `/body/fields/${key}`,
          },
        );
        // What is written is known here: the member is not read back.
        let data: MemberData = resolved.written.get(memberId) ?? existing;
        if (removed.length > 0) {
          data = {
            ...data,
            fields: Object.fromEntries(Object.entries(data.fields).filter(([k]) => !removed.includes(k))),
          };
          await members.releaseEmails(w.tx, workspaceId, memberId, emailKeysOf(data));
        }
        // The data is written in the statement that moves the member's audiences (or alone).
        const updates = removed.length > 0 ? [{ id: memberId, data }] : resolved.updates;
        const writes = updates.length > 0 ? members.updateDataSql(workspaceId, updates) : undefined;
        const after = { ...existing, ...data };
        const changed = changedKeys(existing, after);
        // Rules see only a member's data (and creation time): unchanged data moves no audience.
        if (changed.length > 0) {
          w.publish({ type: "members.updated", members: [{ id: memberId, changed }] });
          await w.followMembers([memberId], [{ ...existing, folded: foldMember(after) }], { read, writes, last: true });
        } else {
          await w.followMembers([], [], { writes, last: true });
        }
        return toMember(after);
      });
    },

    remove(workspaceId: string, request: Schemas["RemoveMembersRequest"]): Promise<Schemas["DeleteMembersResult"]> {
      const memberIds = [...new Set(request.memberIds)];
      return membership.workspaceWrite(workspaceId, { memberWrites: true }, async (w) => {
        // Any audience may hold them (archived ones too), so every one is locked before its sets change.
        await w.locks.all();
        const deleted = await members.delete(w.tx, workspaceId, memberIds);
        // They leave their audiences first, then the workspace.
        await w.forgetMembers(deleted.map((m) => m.seq));
        if (deleted.length > 0) w.publish({ type: "members.deleted", memberIds: deleted.map((m) => m.id) });
        return { deleted: deleted.length, notFound: memberIds.length - deleted.length };
      });
    },

    list: (workspaceId: string, query: MemberPageQuery) => pages.list(workspaceId, query),

    async audiences(workspaceId: string, memberId: string, asOf?: string): Promise<Schemas["MemberAudienceList"]> {
      if (asOf !== undefined) return audiencesAsOf(workspaceId, memberId, asOf);
      if (!(await members.find(store.db, workspaceId, memberId))) throw memberNotFound(memberId);
      return { results: await memberAudiences.memberAudiences(store.db, workspaceId, memberId) };
    },
  };
}

export type MemberService = ReturnType<typeof createMemberService>;
