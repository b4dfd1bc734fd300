import { randomBytes } from "node:crypto";
import type { components } from "../../../generated/api.d.ts";
import { decodeCursor, encodeCursor } from "../../domain/cursor.ts";
import {
  audienceArchived,
  audienceNotFound,
  BadRequestError,
  ConflictError,
  NotFoundError,
  webhookNotFound,
} from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import type { Store } from "../../platform/db/database.ts";
import type { SqlClient } from "../../platform/db/sql-client.ts";
import type { AudienceRepo } from "../membership/audience-repo.ts";
import type { DeliveryRow, WebhookRepo, WebhookRow } from "./webhook-repo.ts";
import { checkWebhookUrl, type Resolve } from "./webhook-transport.ts";

type Schemas = components["schemas"];

export const MAX_WEBHOOKS_PER_WORKSPACE = 25;
/** How long the previous secret still signs after a rotation. */
const PREVIOUS_SECRET_MS = 24 * 3_600_000;

export interface WebhookServiceDeps {
  store: Pick<Store, "db" | "transaction">;
  webhooks: WebhookRepo;
  audiences: Pick<AudienceRepo, "find">;
  allowPrivate: boolean;
  resolve: Resolve;
  /** Told when a delivery was queued (a test, a retry, a recovery), to attempt it at once. */
  queued: () => void;
}

const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

const toWebhook = (row: WebhookRow): Schemas["Webhook"] => ({
  id: row.id,
  url: row.url,
  types: row.types as Schemas["Webhook"]["types"],
  audienceIds: row.audienceIds,
  description: row.description,
  enabled: row.enabled,
  disabledReason: row.disabledReason as Schemas["Webhook"]["disabledReason"],
  failingSince: row.failingSince?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
});

const toDelivery = (row: DeliveryRow): Schemas["WebhookDelivery"] => ({
  id: row.id,
  eventId: row.eventId,
  eventType: row.eventType,
  sequence: row.sequence,
  status: row.status,
  attempts: row.attempts,
  lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
  lastStatusCode: row.lastStatusCode,
  lastError: row.lastError,
  nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
});

/** Webhook subscriptions: their settings, secrets, delivery log, tests and retries. */
export function createWebhookService(deps: WebhookServiceDeps) {
  const { store, webhooks } = deps;

  /** Archived audiences cannot be used in future engagements; unknown ones are not there. */
  async function checkAudiences(workspaceId: string, audienceIds: string[] | null | undefined): Promise<void> {
    for (const id of audienceIds ?? []) {
      const audience = await deps.audiences.find(store.db, workspaceId, id);
      if (!audience) throw audienceNotFound(id);
      if (audience.isArchived) throw audienceArchived(id, audience.name);
    }
  }

  async function locked(tx: SqlClient, workspaceId: string, id: string): Promise<WebhookRow> {
    const row = await webhooks.lock(tx, workspaceId, id);
    if (!row) throw webhookNotFound(id);
    return row;
  }

  return {
    async create(workspaceId: string, request: Schemas["CreateWebhookRequest"]): Promise<Schemas["CreatedWebhook"]> {
      await checkWebhookUrl(request.url, deps);
      await checkAudiences(workspaceId, request.audienceIds);
      const secret = newSecret();
      const row = await store.transaction(async (tx) => {
        if ((await webhooks.count(tx, workspaceId)) >= MAX_WEBHOOKS_PER_WORKSPACE) {
          throw new BadRequestError(
            "too_many_items",
            `A workspace may have at most ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks; delete one first.`,
          );
        }
        return webhooks.create(tx, workspaceId, {
          id: newId("whk"),
          url: request.url,
          types: request.types ?? null,
          audienceIds: request.audienceIds ?? null,
          description: request.description ?? "",
          enabled: request.enabled ?? true,
          secret,
        });
      });
      return { ...toWebhook(row), secret };
    },

    async list(workspaceId: string): Promise<Schemas["WebhookList"]> {
      return { results: (await webhooks.list(store.db, workspaceId)).map(toWebhook) };
    },

    async get(workspaceId: string, id: string): Promise<Schemas["Webhook"]> {
      const row = await webhooks.find(store.db, workspaceId, id);
      if (!row) throw webhookNotFound(id);
      return toWebhook(row);
    },

    async update(workspaceId: string, id: string, patch: Schemas["UpdateWebhookRequest"]): Promise<Schemas["Webhook"]> {
      if (patch.url !== undefined) await checkWebhookUrl(patch.url, deps);
      if (patch.audienceIds) await checkAudiences(workspaceId, patch.audienceIds);
      const row = await store.transaction(async (tx) => {
        const current = await locked(tx, workspaceId, id);
        const enabled = patch.enabled ?? current.enabled;
        return webhooks.update(tx, workspaceId, {
          ...current,
          url: patch.url ?? current.url,
          types: patch.types === undefined ? current.types : patch.types,
          audienceIds: patch.audienceIds === undefined ? current.audienceIds : patch.audienceIds,
          description: patch.description ?? current.description,
          enabled,
          disabledReason: enabled ? null : patch.enabled === false ? "manual" : current.disabledReason,
        });
      });
      deps.queued();
      return toWebhook(row);
    },

    async delete(workspaceId: string, id: string): Promise<void> {
      if (!(await webhooks.delete(store.db, workspaceId, id))) throw webhookNotFound(id);
    },

    rotateSecret(workspaceId: string, id: string): Promise<Schemas["WebhookSecret"]> {
      const secret = newSecret();
      return store.transaction(async (tx) => {
        await locked(tx, workspaceId, id);
        await webhooks.rotate(tx, workspaceId, id, secret, new Date(Date.now() + PREVIOUS_SECRET_MS));
        return { secret };
      });
    },

    async test(workspaceId: string, id: string): Promise<Schemas["WebhookDelivery"]> {
      const eventId = newId("evt");
      const delivery = await store.transaction(async (tx) => {
        await locked(tx, workspaceId, id);
        const payload = {
          id: eventId,
          type: "webhook.test",
          sequence: 0,
          createdAt: new Date().toISOString(),
          data: { webhookId: id },
        };
        return webhooks.queueTest(tx, workspaceId, {
          id: `dlv_${id.slice(4)}_t${eventId.slice(4)}`,
          webhookId: id,
          eventId,
          payload,
        });
      });
      deps.queued();
      return toDelivery(delivery);
    },

    async deliveries(
      workspaceId: string,
      id: string,
      query: { status?: Schemas["DeliveryStatus"] | undefined; limit?: number | undefined; after?: string | undefined },
    ): Promise<Schemas["WebhookDeliveryPage"]> {
      const scope = `deliveries:${workspaceId}:${id}`;
      const after = query.after === undefined ? undefined : decodeCursor(scope, query.after, "after");
      if (!(await webhooks.find(store.db, workspaceId, id))) throw webhookNotFound(id);
      const limit = query.limit ?? 30;
      const rows = await webhooks.listDeliveries(store.db, workspaceId, id, { status: query.status, limit, after });
      const results = rows.slice(0, limit);
      const last = results.at(-1);
      return {
        results: results.map(toDelivery),
        pageInfo: { hasNextPage: rows.length > limit, endCursor: last ? encodeCursor(scope, last) : "" },
      };
    },

    /**
     * Queues the failed deliveries since a time for an attempt now (svix's "recover"): a receiver
     * that was down past the last retry gets what it missed, in sequence order.
     */
    async recover(workspaceId: string, id: string, since: string): Promise<Schemas["RecoveredDeliveries"]> {
      const from = new Date(since);
      // A minute's leeway for a client whose clock is a little ahead of this server's.
      if (from.getTime() > Date.now() + 60_000) {
        throw new BadRequestError(
          "invalid_request",
          "since is in the future; give the time of the first failed delivery.",
          [{ pointer: "/body/since", message: "must not be in the future" }],
        );
      }
      const queued = await store.transaction(async (tx) => {
        const webhook = await locked(tx, workspaceId, id);
        if (!webhook.enabled) {
          throw new ConflictError("webhook_disabled", `Webhook ${id} is disabled; enable it to deliver again.`);
        }
        return webhooks.recover(tx, workspaceId, id, from);
      });
      if (queued > 0) deps.queued();
      return { queued };
    },

    async retry(workspaceId: string, id: string, deliveryId: string): Promise<Schemas["WebhookDelivery"]> {
      const delivery = await store.transaction(async (tx) => {
        const webhook = await locked(tx, workspaceId, id);
        const notFound = () => new NotFoundError("delivery_not_found", `No delivery ${deliveryId} of webhook ${id}.`);
        if (!(await webhooks.deliveryExists(tx, workspaceId, id, deliveryId))) throw notFound();
        if (!webhook.enabled) {
          throw new ConflictError("webhook_disabled", `Webhook ${id} is disabled; enable it to deliver again.`);
        }
        const row = await webhooks.retry(tx, workspaceId, id, deliveryId);
        if (!row) throw notFound();
        return row;
      });
      deps.queued();
      return toDelivery(delivery);
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
