import type { Handlers } from "../contract/handler-types.ts";
import { serviceUnavailable } from "../domain/errors.ts";
import type { AdminService } from "../features/admin/admin-service.ts";
import type { AudienceMemberService } from "../features/audiences/audience-member-service.ts";
import type { AudienceService } from "../features/audiences/audience-service.ts";
import type { EventFeed } from "../features/events/event-feed-service.ts";
import type { MemberExport } from "../features/exports/export-service.ts";
import type { ImportService } from "../features/imports/import-service.ts";
import type { MemberService } from "../features/members/member-service.ts";
import type { WebhookService } from "../features/webhooks/webhook-service.ts";
import { fileFormat, sendFile, sentQuery } from "../platform/http/file-responses.ts";

export interface Services {
  /** Resolves when the database answers and the migrations are applied. */
  ready: () => Promise<void>;
  admin: AdminService;
  audiences: AudienceService;
  audienceMembers: AudienceMemberService;
  members: MemberService;
  memberExport: MemberExport;
  events: EventFeed;
  webhooks: WebhookService;
  imports: ImportService;
}

/** The API key a request was authenticated with (the security handler set it). */
const keyOf = (request: { principal?: { keyId: string } }) => request.principal?.keyId ?? "";

/** One thin handler per operationId: read the typed request, call one service, return its result. */
export function createHandlers({
  ready,
  admin,
  audiences,
  audienceMembers,
  members,
  memberExport,
  events,
  webhooks,
  imports,
}: Services) {
  return {
    getHealth: async () => ({ status: "ok" as const }),
    async getReadiness() {
      try {
        await ready();
      } catch {
        throw serviceUnavailable("The database is not reachable, or its migrations are not applied.");
      }
      return { status: "ready" as const };
    },

    async createWorkspace(request, reply) {
      reply.code(201);
      return admin.createWorkspace(request.body.name);
    },
    listWorkspaces: () => admin.listWorkspaces(),
    async createApiKey(request, reply) {
      reply.code(201);
      return admin.createApiKey(request.params.workspaceId, request.body?.name);
    },
    async revokeApiKey(request, reply) {
      await admin.revokeApiKey(request.params.workspaceId, request.params.keyId);
      reply.code(204);
    },

    async createAudience(request, reply) {
      reply.code(201);
      return audiences.create(request.params.workspaceId, request.body.name);
    },
    getAudience: (request) => audiences.get(request.params.workspaceId, request.params.audienceId),
    listAudiences: (request) => audiences.list(request.params.workspaceId, request.query),
    async archiveAudience(request, reply) {
      await audiences.archive(request.params.workspaceId, request.params.audienceId);
      reply.code(204);
    },
    restoreAudience: (request) => audiences.restore(request.params.workspaceId, request.params.audienceId),
    updateAudience: (request) =>
      audiences.rename(request.params.workspaceId, request.params.audienceId, request.body.name),
    async mergeAudiences(request, reply) {
      reply.code(201);
      return audiences.merge(request.params.workspaceId, request.body);
    },

    addAudienceMembers: (request) =>
      audienceMembers.add(request.params.workspaceId, request.params.audienceId, request.body),
    removeAudienceMembers: (request) =>
      audienceMembers.remove(request.params.workspaceId, request.params.audienceId, request.body),
    // With Accept: text/csv or application/x-ndjson, every member as a file instead of a page.
    async listAudienceMembers(request, reply) {
      const { workspaceId, audienceId } = request.params;
      const format = fileFormat(request, reply);
      if (!format) return audienceMembers.list(workspaceId, audienceId, request.query);
      const file = await memberExport.open(workspaceId, format, { ...sentQuery(request), audienceId }, keyOf(request));
      return sendFile(reply, format, `members-${audienceId}`, file, memberExport.writeTimeoutMs);
    },

    getAudienceFilter: (request) => audiences.getFilter(request.params.workspaceId, request.params.audienceId),
    setAudienceFilter: (request) =>
      audiences.setFilter(request.params.workspaceId, request.params.audienceId, request.body.filter),
    previewAudience: (request) => audiences.preview(request.params.workspaceId, request.body),

    upsertMembers: (request) => members.upsert(request.params.workspaceId, request.body),
    async listMembers(request, reply) {
      const format = fileFormat(request, reply);
      if (!format) return members.list(request.params.workspaceId, request.query);
      const query = sentQuery(request);
      const file = await memberExport.open(request.params.workspaceId, format, query, keyOf(request));
      const name = query.audienceId ? `members-${query.audienceId}` : "members";
      return sendFile(reply, format, name, file, memberExport.writeTimeoutMs);
    },
    getMember: (request) => members.get(request.params.workspaceId, request.params.memberId),
    updateMember: (request) => members.update(request.params.workspaceId, request.params.memberId, request.body),
    deleteMembers: (request) => members.remove(request.params.workspaceId, request.body),
    listMemberAudiences: (request) => members.audiences(request.params.workspaceId, request.params.memberId),

    listEvents: (request) => events.list(request.params.workspaceId, request.query),
    getLatestEventCursor: (request) => events.latest(request.params.workspaceId),

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
    async retryWebhookDelivery(request, reply) {
      reply.code(202);
      return webhooks.retry(request.params.workspaceId, request.params.webhookId, request.params.deliveryId);
    },

    async createImport(request, reply) {
      const { workspaceId } = request.params;
      const declared = request.headers["content-length"];
      const job = await imports.create(
        workspaceId,
        request.query.audienceId,
        // Not destroyed when the upload stops early (a bad file): the answer must still go out.
        request.body.iterator({ destroyOnReturn: false }),
        declared === undefined ? undefined : Number(declared),
      );
      reply.code(202).header("location", `/v0/workspaces/${workspaceId}/imports/${job.id}`);
      return job;
    },
    listImports: (request) => imports.list(request.params.workspaceId, request.query),
    getImport: (request) => imports.get(request.params.workspaceId, request.params.importId),
    cancelImport: (request) => imports.cancel(request.params.workspaceId, request.params.importId),
  } satisfies Handlers;
}
