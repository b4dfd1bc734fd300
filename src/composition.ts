import { createAdminService } from "./features/admin/admin-service.ts";
import { createAuthService } from "./features/admin/auth-service.ts";
import { apiKeyRepo, workspaceRepo } from "./features/admin/workspace-repo.ts";
import { type AudienceCache, createAudienceCache } from "./features/audiences/audience-cache.ts";
import { createAudienceMemberService } from "./features/audiences/audience-member-service.ts";
import { createAudienceService } from "./features/audiences/audience-service.ts";
import { createEventFeed } from "./features/events/event-feed-service.ts";
import { createEventRelay } from "./features/events/event-relay.ts";
import { eventRepo } from "./features/events/event-repo.ts";
import { createEventWorkers } from "./features/events/event-workers.ts";
import { outboxRepo } from "./features/events/outbox-repo.ts";
import { memberExportRepo } from "./features/exports/export-repo.ts";
import { createMemberExport } from "./features/exports/export-service.ts";
import { createChunkApplier } from "./features/imports/import-chunk.ts";
import { importRepo } from "./features/imports/import-repo.ts";
import { CHUNK_ROWS, createImportRunner, IMPORT_WORKERS } from "./features/imports/import-runner.ts";
import { createImportService } from "./features/imports/import-service.ts";
import { createMemberService } from "./features/members/member-service.ts";
import { audienceRepo } from "./features/membership/audience-repo.ts";
import { lockRepo } from "./features/membership/lock-repo.ts";
import { createMemberInputCheck } from "./features/membership/member-input-check.ts";
import { memberPageRepo } from "./features/membership/member-page-repo.ts";
import { createMemberPages } from "./features/membership/member-pages.ts";
import { memberRepo } from "./features/membership/member-repo.ts";
import { membershipRepo } from "./features/membership/membership-repo.ts";
import { createMembershipService, type EventSink } from "./features/membership/membership-service.ts";
import { createWebhookDeliverer } from "./features/webhooks/webhook-deliverer.ts";
import { webhookRepo } from "./features/webhooks/webhook-repo.ts";
import { createWebhookService } from "./features/webhooks/webhook-service.ts";
import { createWebhookSender, type Resolve, resolveAll } from "./features/webhooks/webhook-transport.ts";
import type { Store } from "./platform/db/database.ts";
import { statisticsRepo } from "./platform/db/statistics-repo.ts";

export interface ServiceOptions {
  /** The audience cache for getAudience (a fresh one per call when absent). */
  cache?: AudienceCache;
  /** Told of a failure of background work (publishing events, delivering webhooks). */
  onBackgroundError?: (error: unknown) => void;
  /** Deliver webhooks to loopback and private addresses too (WEBHOOK_ALLOW_PRIVATE). */
  allowPrivateWebhooks?: boolean;
  /** How long events are kept (EVENT_RETENTION_DAYS). */
  eventRetentionDays?: number;
  /** How long a webhook receiver has to answer (WEBHOOK_TIMEOUT_MS, default 10 s). */
  webhookTimeoutMs?: number;
  /** How webhook hosts are resolved, at creation and when connecting (tests substitute a table). */
  resolve?: Resolve;
  /** When delivery attempts are made (tests use a faster schedule than the Standard Webhooks one). */
  webhookAttemptOffsetsMs?: readonly number[];
  /** Member numbers an export reads per statement (tests make it small to cross many batches). */
  exportBatchSize?: number | undefined;
  /** The largest import file accepted (IMPORT_MAX_BYTES, default 1 GiB). */
  importMaxBytes?: number;
  /** How long an import job stays with a process that stopped renewing it (IMPORT_LEASE_MS, default 30 s). */
  importLeaseMs?: number;
  /** Rows an import applies per transaction (IMPORT_CHUNK_ROWS; default: CHUNK_ROWS of import-runner.ts). */
  importChunkRows?: number;
  /** Import jobs run at once, at most one per workspace (IMPORT_WORKERS; default: IMPORT_WORKERS of import-runner.ts). */
  importWorkers?: number;
}

/** The membership module on the store's repositories, recording its events in the outbox. */
export function createMembership(store: Store, committed: (workspaceId: string) => void = () => {}) {
  const events: EventSink = {
    record: (tx, workspaceId, entries) => outboxRepo.append(tx, workspaceId, entries),
    committed,
  };
  return createMembershipService({
    store,
    locks: lockRepo,
    sets: membershipRepo,
    members: memberRepo,
    audiences: audienceRepo,
    events,
  });
}

/**
 * The composition root: every service, given the repositories it uses. Nothing else imports the
 * repository objects for a service; services see only the narrow parts they declare.
 */
export function createServices(store: Store, options: ServiceOptions = {}) {
  const cache = options.cache ?? createAudienceCache();
  const onError = options.onBackgroundError ?? (() => {});
  const allowPrivate = options.allowPrivateWebhooks ?? false;
  const retentionMs = (options.eventRetentionDays ?? 7) * 86_400_000;
  const resolve = options.resolve ?? resolveAll;
  const timeoutMs = options.webhookTimeoutMs ?? 10_000;
  const sender = createWebhookSender({ allowPrivate, timeoutMs, resolve });
  const relay = createEventRelay({ store, events: eventRepo, onDeliveries: () => workers.deliveriesQueued() });
  const deliverer = createWebhookDeliverer({
    store,
    webhooks: webhookRepo,
    sender,
    onError,
    leaseMs: 2 * timeoutMs + 5_000,
    ...(options.webhookAttemptOffsetsMs ? { attemptOffsetsMs: options.webhookAttemptOffsetsMs } : {}),
  });
  const workers = createEventWorkers({
    relay,
    deliverer,
    // A large delete: a write transaction, with the writes' statement timeout, not a read's.
    purge: () => store.transaction((tx) => eventRepo.purgeBefore(tx, new Date(Date.now() - retentionMs))),
    refreshStatistics: store.kind === "embedded" ? () => statisticsRepo.analyzeChanged(store.db) : undefined,
    onError,
  });
  const membership = createMembership(store, (workspaceId) => workers.committed(workspaceId));
  const pages = createMemberPages({ store, pages: memberPageRepo, audiences: audienceRepo });
  const auth = createAuthService({ store, apiKeys: apiKeyRepo });
  const importRunner = createImportRunner({
    store,
    imports: importRepo,
    applyChunk: createChunkApplier({
      membership,
      members: memberRepo,
      imports: importRepo,
      checkInput: createMemberInputCheck(),
    }),
    leaseMs: options.importLeaseMs ?? 30_000,
    chunkRows: options.importChunkRows ?? CHUNK_ROWS[store.kind],
    workers: options.importWorkers ?? IMPORT_WORKERS,
    soleProcess: store.kind === "embedded",
    onError,
  });
  return {
    auth,
    membership,
    relay,
    workers,
    importRunner,
    sender,
    events: createEventFeed({ store, events: eventRepo }),
    webhooks: createWebhookService({
      store,
      webhooks: webhookRepo,
      audiences: audienceRepo,
      allowPrivate,
      resolve,
      queued: () => workers.deliveriesQueued(),
    }),
    admin: createAdminService({ store, auth, workspaces: workspaceRepo, apiKeys: apiKeyRepo }),
    audiences: createAudienceService({ store, cache, membership, audiences: audienceRepo, members: memberRepo }),
    audienceMembers: createAudienceMemberService({ membership, members: memberRepo, pages }),
    imports: createImportService({
      store,
      imports: importRepo,
      audiences: audienceRepo,
      maxBytes: options.importMaxBytes ?? 1_073_741_824,
      queued: () => importRunner.queued(),
    }),
    members: createMemberService({
      store,
      membership,
      members: memberRepo,
      memberAudiences: membershipRepo,
      pages,
    }),
    memberExport: createMemberExport({ store, exports: memberExportRepo, batchSize: options.exportBatchSize }),
  };
}

export type Services = ReturnType<typeof createServices>;
