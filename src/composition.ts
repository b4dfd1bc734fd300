import { CONFIGURATION } from "./config/configuration.ts";
import { type PartialSettings, resolveSettings } from "./config/settings.ts";
import { activityPartitionRepo } from "./features/activities/activity-partitions-repo.ts";
import { createActivityPurge } from "./features/activities/activity-purge.ts";
import { activityReadRepo } from "./features/activities/activity-read-repo.ts";
import { createActivityService } from "./features/activities/activity-service.ts";
import { createIngestCheck } from "./features/activities/ingest-check.ts";
import { createAdminService } from "./features/admin/admin-service.ts";
import { createAuthService } from "./features/admin/auth-service.ts";
import { apiKeyRepo, workspaceRepo } from "./features/admin/workspace-repo.ts";
import { type AudienceCache, createAudienceCache } from "./features/audiences/audience-cache.ts";
import { checkPreviewRule } from "./features/audiences/audience-conditions.ts";
import { createAudienceMemberService } from "./features/audiences/audience-member-service.ts";
import { createAudienceService } from "./features/audiences/audience-service.ts";
import { eventFeedRepo } from "./features/events/event-feed-repo.ts";
import { createEventFeed } from "./features/events/event-feed-service.ts";
import { createEventRelay } from "./features/events/event-relay.ts";
import { eventRepo } from "./features/events/event-repo.ts";
import { createEventWorkers } from "./features/events/event-workers.ts";
import { outboxRepo } from "./features/events/outbox-repo.ts";
import { memberExportRepo } from "./features/exports/export-repo.ts";
import { createMemberExport } from "./features/exports/export-service.ts";
import { fieldCatalogueRepo } from "./features/fields/field-catalogue-repo.ts";
import { createFieldService } from "./features/fields/field-service.ts";
import { recordRepo } from "./features/history/record-repo.ts";
import { createRecordService } from "./features/history/record-service.ts";
import { createChunkApplier } from "./features/imports/import-chunk.ts";
import { importRepo } from "./features/imports/import-repo.ts";
import { createImportRunner } from "./features/imports/import-runner.ts";
import { createImportService } from "./features/imports/import-service.ts";
import { HISTORY_DAYS, historyRepo } from "./features/insight/history-repo.ts";
import { overlapRepo } from "./features/insight/overlap-repo.ts";
import { createRuleInsight } from "./features/insight/rule-insight.ts";
import { createSizeInsight } from "./features/insight/size-insight.ts";
import { createMemberService } from "./features/members/member-service.ts";
import { activityRepo } from "./features/membership/activity-repo.ts";
import { audienceRepo } from "./features/membership/audience-repo.ts";
import { filterPreviewRepo } from "./features/membership/filter-preview-repo.ts";
import { lockRepo } from "./features/membership/lock-repo.ts";
import { createMemberInputCheck } from "./features/membership/member-input-check.ts";
import { memberRepo } from "./features/membership/member-repo.ts";
import { membershipRepo } from "./features/membership/membership-repo.ts";
import { createMembershipService } from "./features/membership/membership-service.ts";
import { memberPageRepo } from "./features/membership/pages/member-page-repo.ts";
import { createMemberPages } from "./features/membership/pages/member-pages.ts";
import { activityRuleRepo } from "./features/membership/rules/activity-rule-repo.ts";
import { createClockWorker } from "./features/membership/rules/clock-worker.ts";
import { fieldTypeRepo } from "./features/membership/rules/field-type-repo.ts";
import { createFilterCostCheck } from "./features/membership/rules/filter-cost.ts";
import { filterCostRepo } from "./features/membership/rules/filter-cost-repo.ts";
import { ruleInsightRepo } from "./features/membership/rules/rule-insight-repo.ts";
import { ruleRepo } from "./features/membership/rules/rule-repo.ts";
import { writeRecords } from "./features/membership/transition-repo.ts";
import { memberCandidateRepo } from "./features/membership/upsert/member-candidates-repo.ts";
import { webhookAttemptRepo } from "./features/webhooks/webhook-attempt-repo.ts";
import { createWebhookDeliverer } from "./features/webhooks/webhook-deliverer.ts";
import { webhookRepo } from "./features/webhooks/webhook-repo.ts";
import { createWebhookService } from "./features/webhooks/webhook-service.ts";
import { createWebhookSender, resolveAll } from "./features/webhooks/webhook-transport.ts";
import { createWebhookWorkers } from "./features/webhooks/webhook-workers.ts";
import type { Store } from "./platform/db/database.ts";
import { createStatisticsWorker } from "./platform/db/statistics-worker.ts";

export interface CompositionHooks {
  /** The audience cache for getAudience (a fresh one when absent). */
  cache?: AudienceCache;
  /** Told of a failure of background work (publishing events, delivering webhooks, imports). */
  onBackgroundError?: (error: unknown) => void;
}

/**
 * The composition root: every service, given the repositories it uses and its section of the
 * settings. Nothing else imports repository objects for a service, and no feature imports
 * another: what one needs of another is passed here, as a narrow function.
 */
export function createServices(store: Store, given: PartialSettings = {}, hooks: CompositionHooks = {}) {
  const settings = resolveSettings(given);
  const cache = hooks.cache ?? createAudienceCache({ ttlMs: settings.cache.audienceTtlMs });
  const onError = hooks.onBackgroundError ?? (() => {});
  const { allowPrivate, timeoutMs } = settings.webhooks;
  const resolve = settings.webhooks.resolve ?? resolveAll;
  const retentionMs = settings.events.retentionDays * 86_400_000;

  const sender = createWebhookSender({ allowPrivate, timeoutMs, resolve });
  const deliverer = createWebhookDeliverer({
    store,
    webhooks: webhookAttemptRepo,
    sender,
    onError,
    leaseMs: 2 * timeoutMs + 5_000,
    ...(settings.webhooks.attemptOffsetsMs ? { attemptOffsetsMs: settings.webhooks.attemptOffsetsMs } : {}),
  });
  const webhookWorkers = createWebhookWorkers({ deliverer, onError });
  const relay = createEventRelay({ store, events: eventRepo, onDeliveries: () => webhookWorkers.deliveriesQueued() });
  let recordCompacted = false;
  const eventWorkers = createEventWorkers({
    relay,
    // A large delete: a write transaction, with the writes' statement timeout, not a read's. The
    // size history has its own retention (400 days), whatever the events'.
    purge: async () => {
      await store.transaction((tx) => eventRepo.purgeBefore(tx, new Date(Date.now() - retentionMs)));
      await store.transaction((tx) => historyRepo.purgeBefore(tx, new Date(Date.now() - HISTORY_DAYS * 86_400_000)));
      // The membership record keeps its horizon exactly: compacted, each member's last entry
      // before it kept while the member was still in.
      const cutoff = Date.now() - settings.membershipHistory.days * 86_400_000;
      // The first pass of a process compacts everything; later ones the members that moved in the
      // week before the cutoff (the passes between compacted the rest).
      const from = recordCompacted ? new Date(cutoff - 7 * 86_400_000) : undefined;
      await store.transaction((tx) => recordRepo.compactBefore(tx, new Date(cutoff), from));
      recordCompacted = true;
    },
    onError,
  });
  const membership = createMembershipService({
    store,
    locks: lockRepo,
    sets: membershipRepo,
    rules: ruleRepo,
    members: memberRepo,
    candidates: memberCandidateRepo,
    audiences: audienceRepo,
    fieldTypes: fieldTypeRepo,
    activities: activityRuleRepo,
    activityRetentionDays: settings.activities.retentionDays,
    events: { committed: (workspaceId) => eventWorkers.committed(workspaceId) },
    records: writeRecords({ events: outboxRepo.appendSql, history: historyRepo.recordSql }),
  });
  const record = createRecordService({ store, record: recordRepo, horizonDays: settings.membershipHistory.days });
  const pages = createMemberPages({ store, pages: memberPageRepo });
  const auth = createAuthService({ store, apiKeys: apiKeyRepo });
  const activityService = createActivityService({
    store,
    membership,
    members: memberRepo,
    activities: activityRepo,
    reads: activityReadRepo,
    check: createIngestCheck(),
    retentionDays: settings.activities.retentionDays,
  });
  const importRunner = createImportRunner({
    store,
    imports: importRepo,
    applyChunk: createChunkApplier({
      membership,
      members: memberRepo,
      imports: importRepo,
      checkInput: createMemberInputCheck(),
      activities: activityService,
    }),
    leaseMs: settings.imports.leaseMs,
    chunkRows: settings.imports.chunkRows ?? CONFIGURATION.settings.imports.chunkRows.byStore[store.kind],
    workers: settings.imports.workers,
    soleProcess: store.kind === "embedded",
    onError,
  });
  const statistics = store.kind === "embedded" ? createStatisticsWorker(store.db, onError) : undefined;
  const clockWorker = createClockWorker({
    intervalMs: settings.rules.timeIntervalSeconds * 1000,
    dueForClock: (before) => ruleRepo.dueForClock(store.db, before),
    followClock: (workspaceId) => membership.followClock(workspaceId),
    onError,
  });
  // One bound for every operation that evaluates a client's filter over the workspace.
  const filterCost = createFilterCostCheck({
    repo: filterCostRepo,
    budget: settings.rules.costBudget ?? CONFIGURATION.settings.rules.costBudget.byStore[store.kind],
  });
  const activityPurge = createActivityPurge({
    store,
    partitions: activityPartitionRepo,
    retentionDays: settings.activities.retentionDays,
    partitioned: store.kind === "postgres",
    intervalMs: settings.activities.purgeIntervalMs,
    onError,
  });
  const memberExport = createMemberExport({ store, exports: memberExportRepo, ...settings.exports });

  return {
    settings,
    auth,
    membership,
    relay,
    sender,
    /** The background work of a server process: started when it is ready, stopped when it closes. */
    workers: {
      start(): void {
        eventWorkers.start();
        webhookWorkers.start();
        importRunner.start();
        statistics?.start();
        clockWorker.start();
        activityPurge.start();
      },
      async stop(): Promise<void> {
        await Promise.all([
          eventWorkers.stop(),
          webhookWorkers.stop(),
          importRunner.stop(),
          statistics?.stop(),
          clockWorker.stop(),
          activityPurge.stop(),
        ]);
      },
    },
    /** Each webhook's pending and failed deliveries, read when /metrics is scraped. */
    webhookBacklog: () => webhookRepo.backlog(store.db),
    events: createEventFeed({ store, events: eventFeedRepo }),
    webhooks: createWebhookService({
      store,
      webhooks: webhookRepo,
      audiences: audienceRepo,
      allowPrivate,
      resolve,
      queued: () => webhookWorkers.deliveriesQueued(),
    }),
    admin: createAdminService({ store, auth, workspaces: workspaceRepo, apiKeys: apiKeyRepo }),
    audiences: createAudienceService({
      checkCost: filterCost,
      store,
      cache,
      membership,
      audiences: audienceRepo,
      preview: filterPreviewRepo,
      fieldTypes: fieldTypeRepo,
      rules: ruleRepo,
      activityRetentionDays: settings.activities.retentionDays,
    }),
    fields: createFieldService({
      store,
      membership,
      fieldTypes: fieldTypeRepo,
      rules: ruleRepo,
      catalogue: fieldCatalogueRepo,
    }),
    ruleInsight: createRuleInsight({
      store,
      checkCost: filterCost,
      audiences: audienceRepo,
      fieldTypes: fieldTypeRepo,
      insight: ruleInsightRepo,
      activities: activityRuleRepo,
      activityRetentionDays: settings.activities.retentionDays,
      checkRule: (workspaceId, audienceId, filter) =>
        checkPreviewRule(
          audienceId,
          filter,
          (id) => audienceRepo.find(store.db, workspaceId, id),
          () => ruleRepo.namingAudiences(store.db, workspaceId),
        ),
    }),
    sizeInsight: createSizeInsight({ store, overlaps: overlapRepo, history: historyRepo, audiences: audienceRepo }),
    record,
    audienceMembers: createAudienceMemberService({
      membership,
      members: memberRepo,
      pages,
      membersAsOf: (workspaceId, audienceId, query) => record.membersAsOf(workspaceId, audienceId, query),
      fileBound: (workspaceId, audienceId, asOf, search) => record.fileBound(workspaceId, audienceId, asOf, search),
    }),
    imports: createImportService({
      store,
      imports: importRepo,
      audiences: audienceRepo,
      maxBytes: settings.imports.maxBytes,
      queued: () => importRunner.queued(),
    }),
    members: createMemberService({
      store,
      membership,
      members: memberRepo,
      memberAudiences: membershipRepo,
      pages,
      audiencesAsOf: (workspaceId, memberId, asOf) => record.memberAudiencesAsOf(workspaceId, memberId, asOf),
    }),
    memberExport,
    activities: activityService,
    /** Keeps activities' partitions (run at start and every purgeIntervalMs). */
    activityPurge,
  };
}

export type Services = ReturnType<typeof createServices>;
