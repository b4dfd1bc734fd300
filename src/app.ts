import { join } from "node:path";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import openapiGlue from "fastify-openapi-glue";
import fp from "fastify-plugin";
import { createServices, type Services } from "./composition.ts";
import { type PartialSettings, resolveSettings } from "./config/settings.ts";
import {
  heavyOperations,
  operationsTaking,
  readContract,
  readOperations,
  writeOperations,
} from "./contract/contract.ts";
import type { Handlers } from "./contract/handler-types.ts";
import { BadRequestError, serviceUnavailable } from "./domain/errors.ts";
import { createActivityHandlers } from "./features/activities/activity-handlers.ts";
import { createAdminHandlers } from "./features/admin/admin-handlers.ts";
import { createAudienceCache } from "./features/audiences/audience-cache.ts";
import { createAudienceHandlers } from "./features/audiences/audience-handlers.ts";
import { createEventHandlers } from "./features/events/event-handlers.ts";
import { createFieldHandlers } from "./features/fields/field-handlers.ts";
import { createHistoryHandlers } from "./features/history/history-handlers.ts";
import { createImportHandlers } from "./features/imports/import-handlers.ts";
import { createInsightHandlers } from "./features/insight/insight-handlers.ts";
import { createMemberHandlers } from "./features/members/member-handlers.ts";
import { createWebhookHandlers } from "./features/webhooks/webhook-handlers.ts";
import type { Store } from "./platform/db/database.ts";
import { bodyParsers } from "./platform/http/body-parsers.ts";
import { clientErrorHandler } from "./platform/http/client-errors.ts";
import { contractHooks } from "./platform/http/contract-hooks.ts";
import { createHealthHandlers } from "./platform/http/health-handlers.ts";
import { withHeavyLimit } from "./platform/http/heavy-requests.ts";
import { idempotencyHooks } from "./platform/http/idempotency.ts";
import { idempotencyRepo } from "./platform/http/idempotency-repo.ts";
import { countRequests, metricsRoute } from "./platform/http/metrics-route.ts";
import { newRequestId, routeNotFound, sendProblem } from "./platform/http/problem.ts";
import { registerRateLimit } from "./platform/http/rate-limit.ts";
import { rateLimitRepo } from "./platform/http/rate-limit-repo.ts";
import { RequestLog } from "./platform/http/request-log.ts";
import { bodyDeadline, unreadBodies } from "./platform/http/request-timeout.ts";
import { createSecurityHandlers } from "./platform/http/security.ts";
import { trackWebhookBacklog } from "./platform/metrics.ts";
import { consoleRoutes } from "./platform/pages/console-routes.ts";
import { docsRoutes } from "./platform/pages/docs-routes.ts";
import { PROJECT_ROOT } from "./platform/project-root.ts";
import { withConsistency } from "./platform/replica-consistency.ts";
import { createWorkLoop } from "./platform/work-loop.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** The application's services: main.ts runs its start-up tasks on them before listening. */
    services: Services;
  }
}

export interface AppOptions {
  store: Store;
  /** The settings of the HTTP layer and the features, by section; what is absent is the default. */
  settings?: PartialSettings;
  logger?: FastifyServerOptions["logger"];
  /** Run the background work (publishing events, delivering webhooks, import jobs) in this process (default true). */
  workers?: boolean | undefined;
}

/** Kept responses for Idempotency-Key replays expire after 24 hours; they are swept this often. */
const IDEMPOTENCY_PURGE_MS = 3_600_000;

/**
 * The process's lifecycle: the audience cache kept current by other processes' change reports,
 * the background work started when the app is ready and stopped when it closes, and requests
 * arriving while it closes told to go elsewhere.
 */
const lifecycle = fp(
  async (app: FastifyInstance, { store, workers }: { store: Store; workers: boolean }) => {
    const { services } = app;
    let closing = false;
    app.addHook("preClose", (done) => {
      closing = true;
      done();
    });
    if (workers) {
      const purge = createWorkLoop({
        intervalMs: IDEMPOTENCY_PURGE_MS,
        onError: () => {},
        run: async () => void (await idempotencyRepo.purgeExpired(store.db)),
      });
      app.addHook("onReady", async () => {
        services.workers.start();
        purge.start();
      });
      app.addHook("onClose", () => Promise.all([services.workers.stop(), purge.stop()]));
    }
    app.addHook("onClose", async () => services.sender.close());
    const untrackBacklog = trackWebhookBacklog(services.webhookBacklog);
    app.addHook("onClose", async () => untrackBacklog());
    // Every answer names its request, so a client can quote it and an operator can find its log lines.
    app.addHook("onRequest", (request, reply, done) => {
      reply.header("x-request-id", request.id);
      if (closing) {
        // In-flight requests finish; a new one on a kept-alive connection is told to go elsewhere.
        reply.header("connection", "close");
        sendProblem(request, reply, serviceUnavailable("The server is shutting down; retry on another one.", 1));
        return;
      }
      // An empty path segment (/workspaces//audiences) names nothing: no operation answers it.
      if (Object.values((request.params ?? {}) as Record<string, string>).includes("")) {
        routeNotFound(request, reply);
        return;
      }
      done();
    });
  },
  { name: "lifecycle" },
);

/** One handler object for the whole contract: every feature's handlers, spread together. */
function handlersOf(services: Services, store: Store): Handlers {
  const memberFiles = services.memberExport;
  return {
    ...createHealthHandlers({ ready: () => store.ready() }),
    ...createAdminHandlers(services),
    ...createAudienceHandlers({ ...services, memberFiles }),
    ...createMemberHandlers({ ...services, memberFiles }),
    ...createActivityHandlers(services),
    ...createEventHandlers(services),
    ...createWebhookHandlers(services),
    ...createImportHandlers(services),
    ...createFieldHandlers(services),
    ...createInsightHandlers(services),
    ...createHistoryHandlers(services),
  } satisfies Handlers;
}

/** The HTTP application, bound to the contract; it does not listen (see main.ts). */
export async function buildApp({ store, settings: given = {}, logger = false, workers = true }: AppOptions) {
  const cache = createAudienceCache({ ttlMs: resolveSettings(given).cache.audienceTtlMs });
  let log: FastifyInstance["log"] | undefined;
  const services = createServices(store, given, {
    cache,
    onBackgroundError: (error) => log?.error({ err: error }, "background work failed"),
  });
  const { http } = services.settings;
  const app = Fastify({
    logger,
    // One line per request instead of Fastify's two (request-log.ts).
    logController: new RequestLog(),
    bodyLimit: http.bodyLimit,
    genReqId: newRequestId,
    // Never trust a client-chosen request id: it goes into every log line.
    requestIdHeader: false,
    // Answered by the lifecycle plugin as a problem document instead of Fastify's own JSON.
    return503OnClosing: false,
    // The contract has no HEAD operations; answer them like any other unknown route.
    exposeHeadRoutes: false,
    // A client that trickles its request (headers and body) is cut off with 408 after the
    // request timeout, so slow requests cannot hold connections and buffers indefinitely. Node
    // checks the timeout every connectionsCheckingInterval (30 s unless told otherwise).
    requestTimeout: http.requestTimeoutMs,
    http: { connectionsCheckingInterval: Math.max(100, Math.min(5_000, Math.floor(http.requestTimeoutMs / 10))) },
    // Member ids may be 255 characters, percent-encoded up to 12 bytes each in a path.
    routerOptions: { maxParamLength: 3100 },
    clientErrorHandler: clientErrorHandler(http.requestTimeoutMs),
    // Errors the router raises before any route runs (a malformed %-escape in the path) are
    // problem documents too.
    frameworkErrors: (error, request, reply) =>
      sendProblem(request, reply, new BadRequestError("invalid_request", `The URL is not valid: ${error.message}`)),
  });
  log = app.log;
  app.decorate("services", services);
  // Watched once the app is ready: building it (compiling the contract's schemas) holds the event
  // loop for seconds on a busy machine, and a LISTEN connection begun before that timed out and
  // warned on a clean start. Until the watch is live, audiences are not cached.
  let stopWatching = async () => {};
  app.addHook("onReady", async () => {
    stopWatching = store.watchAudiences({
      changed: (workspaceId, audienceId) => cache.invalidate(workspaceId, audienceId),
      live: (isLive) => cache.setLive(isLive),
      report: (level, message) => app.log[level](message),
    });
  });
  app.addHook("onClose", () => stopWatching());

  const fileOperations = operationsTaking("text/csv");
  countRequests(app);
  bodyDeadline(app, http.requestTimeoutMs, fileOperations);
  unreadBodies(app, { lingerMs: Math.min(http.requestTimeoutMs, 5_000) });
  await app.register(lifecycle, { store, workers });
  const idempotency = idempotencyHooks(store, idempotencyRepo);
  app.addHook("onClose", () => idempotency.close());
  const { perMinute } = services.settings.rateLimit;
  if (perMinute > 0) await registerRateLimit(app, store, rateLimitRepo, { max: perMinute, windowMs: 60_000 });
  await app.register(contractHooks, { fileOperations, idempotency });
  await app.register(bodyParsers, { fileOperations });
  await app.register(docsRoutes, { publicUrl: http.publicUrl });
  await app.register(consoleRoutes, { dir: join(PROJECT_ROOT, "dist/console") });
  metricsRoute(app, { token: http.metricsToken });
  await app.register(openapiGlue, {
    specification: readContract(),
    serviceHandlers: withConsistency(
      withHeavyLimit(handlersOf(services, store), heavyOperations(), services.settings.rateLimit.heavyPerKey),
      { reads: readOperations(), writes: writeOperations() },
      store,
    ),
    securityHandlers: createSecurityHandlers({ auth: services.auth, adminToken: http.adminToken }),
  });
  return app;
}
