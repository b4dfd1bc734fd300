import { outboxRepo } from "../../src/features/events/outbox-repo.ts";
import { historyRepo } from "../../src/features/insight/history-repo.ts";
import { audienceRepo } from "../../src/features/membership/audience-repo.ts";
import { lockRepo } from "../../src/features/membership/lock-repo.ts";
import { memberRepo } from "../../src/features/membership/member-repo.ts";
import { membershipRepo } from "../../src/features/membership/membership-repo.ts";
import { createMembershipService, type MembershipDeps } from "../../src/features/membership/membership-service.ts";
import { activityRuleRepo } from "../../src/features/membership/rules/activity-rule-repo.ts";
import { fieldTypeRepo } from "../../src/features/membership/rules/field-type-repo.ts";
import { ruleRepo } from "../../src/features/membership/rules/rule-repo.ts";
import { writeRecords } from "../../src/features/membership/transition-repo.ts";
import { memberCandidateRepo } from "../../src/features/membership/upsert/member-candidates-repo.ts";
import type { Store } from "../../src/platform/db/database.ts";
import type { EventSink } from "./event-sink.ts";

/** The write's records as src/composition.ts wires them: the outbox, the membership record, the size history. */
export const serviceRecords = writeRecords({ events: outboxRepo.appendSql, history: historyRepo.recordSql });

/** The membership record and the size history as the service writes them, without the outbox. */
const recordsWithoutOutbox = writeRecords({ events: () => undefined, history: historyRepo.recordSql });

/**
 * The membership service on a store's own repositories, as src/composition.ts wires it, for the
 * store tests and the benchmark's clock scenarios that drive it in process: with the clock they
 * set, where its events go (to `events` when given, which sees each write's entries, else
 * nowhere; `records: serviceRecords` for the outbox), and the retention of activities. The size
 * history and the membership record are the real ones unless `records` is given.
 */
export function storeMembership(
  store: Store,
  options: Partial<Pick<MembershipDeps, "clock" | "records" | "activityRetentionDays">> & { events?: EventSink } = {},
) {
  const { events, ...rest } = options;
  return createMembershipService({
    store,
    locks: lockRepo,
    sets: membershipRepo,
    rules: ruleRepo,
    members: memberRepo,
    candidates: memberCandidateRepo,
    audiences: audienceRepo,
    fieldTypes: fieldTypeRepo,
    activities: activityRuleRepo,
    events: { committed: (workspaceId) => events?.committed(workspaceId) },
    records: {
      async record(tx, workspaceId, entries, sizes) {
        await events?.record(tx, workspaceId, entries);
        await recordsWithoutOutbox.record(tx, workspaceId, entries, sizes);
      },
      inStatement(workspaceId, entries, fromDiff) {
        // What a write's last statement records never passes through the process.
        if (events) throw new Error("an events sink cannot see the entries of a write's last statement");
        return recordsWithoutOutbox.inStatement(workspaceId, entries, fromDiff);
      },
    },
    ...rest,
  });
}
