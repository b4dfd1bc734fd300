import { matches } from "../domain/filter.ts";
import { audienceRepo } from "../store/audience-repo.ts";
import type { Tx } from "../store/database.ts";
import { memberRepo } from "../store/member-repo.ts";
import { membershipRepo } from "../store/membership-repo.ts";

const pairKey = (audienceId: string, memberId: string) => `${audienceId}\u0000${memberId}`;

/**
 * After members were created or their data changed, puts each of them in or out of every
 * rule-based audience of the workspace, in the caller's transaction. The rule is evaluated in
 * process (the same semantics as the SQL compilation), so the statements are a few bulk ones
 * whatever the number of audiences.
 */
export async function syncRuleMemberships(tx: Tx, workspaceId: string, memberIds: string[]): Promise<void> {
  if (memberIds.length === 0) return;
  const audiences = await audienceRepo.lockRuleBased(tx, workspaceId);
  if (audiences.length === 0) return;
  const audienceIds = audiences.map((a) => a.id);
  const members = await memberRepo.folded(tx, workspaceId, memberIds);
  const state = await membershipRepo.stateOf(tx, workspaceId, audienceIds, memberIds);
  const entries = new Map(state.entries.map((e) => [pairKey(e.audienceId, e.memberId), e.kind]));
  const current = new Set(state.current.map((c) => pairKey(c.audienceId, c.memberId)));

  const joins: { audienceId: string; memberId: string; createdAt: Date }[] = [];
  const leaves: { audienceId: string; memberId: string }[] = [];
  const deltas = new Map<string, number>();
  for (const audience of audiences) {
    for (const member of members) {
      const key = pairKey(audience.id, member.id);
      const entry = entries.get(key);
      const belongs =
        entry === "include" || (entry !== "exclude" && matches(audience.filter, member.folded, member.createdAt));
      if (belongs === current.has(key)) continue;
      if (belongs) joins.push({ audienceId: audience.id, memberId: member.id, createdAt: member.createdAt });
      else leaves.push({ audienceId: audience.id, memberId: member.id });
      deltas.set(audience.id, (deltas.get(audience.id) ?? 0) + (belongs ? 1 : -1));
    }
  }
  await membershipRepo.insertPairs(tx, workspaceId, joins);
  await membershipRepo.deletePairs(tx, workspaceId, leaves);
  await audienceRepo.addToMemberCounts(tx, workspaceId, deltas);
}
