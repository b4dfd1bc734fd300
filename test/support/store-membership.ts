import { historyRepo } from "../../src/features/insight/history-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import { lockRepo } from "../../src/features/membership/lock-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { membershipRepo } from "../../src/features/membership/membership-repo.ts";
import { createMembershipService, type MembershipDeps } from "../../src/features/membership/membership-service.ts";
import { activityRuleRepo } from "../../src/features/membership/rules/activity-rule-repo.ts";
import { fieldTypeRepo } from "../../src/features/membership/rules/field-type-repo.ts";
import { ruleRepo } from "../../src/features/membership/rules/rule-repo.ts";
import { transitionRepo } from "../../src/features/membership/transition-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";

/**
 * The membership service on a store's own repositories, as src/composition.ts wires it, for the
 * store tests and the benchmark's clock scenarios that drive it in process: with the clock they
 * set, where its events go (nowhere unless given), and the retention of activities. The size
 * history and the membership record are the real ones unless given.
 */
export function storeMembership(
  store: Store,
  options: Partial<Pick<MembershipDeps, "clock" | "events" | "history" | "transitions" | "activityRetentionDays">> = {},
) {
  return createMembershipService({
    store,
    locks: lockRepo,
    sets: membershipRepo,
    rules: ruleRepo,
    members: memberRepo,
    audiences: audienceRepo,
    fieldTypes: fieldTypeRepo,
    activities: activityRuleRepo,
    events: { record: async () => {}, committed: () => {} },
    history: historyRepo,
    transitions: transitionRepo,
    ...options,
  });
}
