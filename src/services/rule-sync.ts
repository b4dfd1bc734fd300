import { type Filter, matches } from "../domain/filter.ts";
import { audienceRepo } from "../store/audience-repo.ts";
import type { Store, Tx } from "../store/database.ts";
import { memberRepo } from "../store/member-repo.ts";
import { membershipRepo } from "../store/membership-repo.ts";
import { workspaceRepo } from "../store/workspace-repo.ts";

/**
 * After members were created or their data changed, puts each of them in or out of every
 * rule-based audience of the workspace, in the caller's transaction (which holds the workspace's
 * member lock). The rule is evaluated in process (the same semantics as the SQL compilation);
 * one statement then writes every audience's match and member bits.
 */
export async function syncRuleMemberships(tx: Tx, workspaceId: string, memberIds: string[]): Promise<void> {
  if (memberIds.length === 0) return;
  const audiences = await audienceRepo.lockRuleBased(tx, workspaceId);
  if (audiences.length === 0) return;
  const members = await memberRepo.folded(tx, workspaceId, memberIds);
  const matched = audiences.map((audience) => ({
    audienceId: audience.id,
    seqs: members.filter((m) => matches(audience.filter, m.folded, m.createdAt)).map((m) => m.seq),
  }));
  const changes = await membershipRepo.applyMatches(
    tx,
    workspaceId,
    members.map((m) => m.seq),
    matched,
  );
  await audienceRepo.addToMemberCounts(tx, workspaceId, changes);
}

/**
 * Replaces the audience's rule and computes its matches over the whole workspace, in the
 * caller's transaction (which holds the workspace's member lock and the audience's lock).
 * Returns how much the member count changed.
 */
export async function applyRule(
  tx: Tx,
  workspaceId: string,
  audienceId: string,
  filter: Filter | null,
): Promise<number> {
  await audienceRepo.setFilter(tx, workspaceId, audienceId, filter);
  const delta = await membershipRepo.recompute(tx, workspaceId, audienceId, filter);
  await audienceRepo.addToMemberCount(tx, workspaceId, audienceId, delta);
  return delta;
}

/**
 * Computes the rule matches that an upgrade could not (it marks such audiences rule_outdated):
 * run at start, before the service answers. Each audience in a transaction of its own; a
 * process that finds one already done by another skips it.
 */
export async function refreshOutdatedRules(store: Store): Promise<number> {
  let refreshed = 0;
  for (const { workspaceId, id } of await audienceRepo.listRuleOutdated(store.db)) {
    refreshed += await store.transaction(async (tx) => {
      await workspaceRepo.lockMemberWrites(tx, workspaceId);
      const audience = await audienceRepo.lockRuleOutdated(tx, workspaceId, id);
      if (!audience) return 0;
      await applyRule(tx, workspaceId, id, audience.filter);
      return 1;
    });
  }
  return refreshed;
}
