import type { Handlers } from "../../contract/handler-types.ts";
import type { WebhookService } from "./webhook-service.ts";

/** Webhooks and their deliveries. */
export function createWebhookHandlers({ webhooks }: { webhooks: WebhookService }) {
  return {
    async createWebhook(request, reply) {
      reply.code(201);
      return webhooks.create(request.params.workspaceId, request.body);
    },
    listWebhooks: (request) => webhooks.list(request.params.workspaceId),
    getWebhook: (request) => webhooks.get(request.params.workspaceId, request.params.webhookId),
    updateWebhook: (request) => webhooks.update(request.params.workspaceId, request.params.webhookId, request.body),
    async deleteWebhook(request, reply) {
      await webhooks.delete(request.params.workspaceId, request.params.webhookId);
      reply.code(204);
    },
    rotateWebhookSecret: (request) => webhooks.rotateSecret(request.params.workspaceId, request.params.webhookId),
    async testWebhook(request, reply) {
      reply.code(202);
      return webhooks.test(request.params.workspaceId, request.params.webhookId);
    },
    listWebhookDeliveries: (request) =>
      webhooks.deliveries(request.params.workspaceId, request.params.webhookId, request.query),
    async recoverWebhook(request, reply) {
      reply.code(202);
      return webhooks.recover(request.params.workspaceId, request.params.webhookId, request.body.since);
    },
    async retryWebhookDelivery(request, reply) {
      reply.code(202);
      return webhooks.retry(request.params.workspaceId, request.params.webhookId, request.params.deliveryId);
    },
  } satisfies Partial<Handlers>;
}
