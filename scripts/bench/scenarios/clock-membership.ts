import { outboxRepo } from "../../../src/features/events/outbox-repo.ts";
import { historyRepo } from "../../../src/features/insight/history-repo.ts";
import { audienceRepo } from "../../../src/features/membership/audience-repo.ts";
import { lockRepo } from "../../../src/features/membership/lock-repo.ts";
import { memberRepo } from "../../../src/features/membership/member-repo.ts";
import { membershipRepo } from "../../../src/features/membership/membership-repo.ts";
import { createMembershipService } from "../../../src/features/membership/membership-service.ts";
import { activityRuleRepo } from "../../../src/features/membership/rules/activity-rule-repo.ts";
import { fieldTypeRepo } from "../../../src/features/membership/rules/field-type-repo.ts";
import { ruleRepo } from "../../../src/features/membership/rules/rule-repo.ts";
import { transitionRepo } from "../../../src/features/membership/transition-repo.ts";
import type { Store } from "../../../src/platform/db/database.ts";

/**
 * The membership service on the service's own database, in this process, with a clock the
 * scenario sets: the clock scenarios time followClock itself, not the worker's interval.
 */
export function clockMembership(store: Store, clock: () => number, activityRetentionDays?: number) {
  return createMembershipService({
    store,
    locks: lockRepo,
    sets: membershipRepo,
    rules: ruleRepo,
    members: memberRepo,
    audiences: audienceRepo,
    fieldTypes: fieldTypeRepo,
    activities: activityRuleRepo,
    activityRetentionDays,
    // The server's event workers publish the outbox; this process has none to wake.
    events: { record: (tx, workspaceId, entries) => outboxRepo.append(tx, workspaceId, entries), committed: () => {} },
    history: historyRepo,
    transitions: transitionRepo,
    clock,
  });
}
