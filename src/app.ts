import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from "fastify";
import openapiGlue from "fastify-openapi-glue";
import { createServices, type ServiceOptions } from "./composition.ts";
import { operationsRequiringBody, operationsTaking, readContract } from "./contract/contract.ts";
import { BadRequestError, serviceUnavailable, unsupportedMediaType } from "./domain/errors.ts";
import { createAudienceCache } from "./features/audiences/audience-cache.ts";
import { createHandlers } from "./http/handlers.ts";
import type { Store } from "./platform/db/database.ts";
import { clientErrorHandler } from "./platform/http/client-errors.ts";
import { csvBodies, requireCsvBody } from "./platform/http/csv-body.ts";
import { docsRoutes } from "./platform/http/docs-routes.ts";
import { idempotencyHooks } from "./platform/http/idempotency.ts";
import { idempotencyRepo } from "./platform/http/idempotency-repo.ts";
import { strictJsonBodies } from "./platform/http/json-body.ts";
import { countRequests, metricsRoute } from "./platform/http/metrics-route.ts";
import { newRequestId, problemErrorHandler, routeNotFound, sendProblem } from "./platform/http/problem.ts";
import { type RateLimitOptions, registerRateLimit } from "./platform/http/rate-limit.ts";
import { rateLimitRepo } from "./platform/http/rate-limit-repo.ts";
import { bodyDeadline } from "./platform/http/request-timeout.ts";
import { createSecurityHandlers } from "./platform/http/security.ts";
import { rejectMalformedText } from "./platform/http/text-guard.ts";
import { createValidatorCompiler } from "./platform/http/validation.ts";

export interface AppOptions {
  store: Store;
  /** Requests per API key per window; absent or max 0: not limited. */
  rateLimit?: RateLimitOptions | undefined;
  adminToken?: string | undefined;
  bodyLimit?: number;
  logger?: FastifyServerOptions["logger"];
  /** How long a read audience is trusted without change reports (the default: 5 s). */
  audienceCacheTtlMs?: number | undefined;
  /** Run the background work (publishing events, delivering webhooks, import jobs) in this process (default true). */
  workers?: boolean | undefined;
  /** Deliver webhooks to loopback and private addresses too (WEBHOOK_ALLOW_PRIVATE). */
  allowPrivateWebhooks?: boolean | undefined;
  /** How long events are kept (EVENT_RETENTION_DAYS, default 7). */
  eventRetentionDays?: number | undefined;
  /** Webhook delivery settings beside WEBHOOK_ALLOW_PRIVATE (see ServiceOptions). */
  webhooks?: Pick<ServiceOptions, "webhookTimeoutMs" | "resolve" | "webhookAttemptOffsetsMs"> | undefined;
  /** How long a client may take to send a request's headers and body (the default: 60 s); then 408. */
  requestTimeoutMs?: number | undefined;
  /** Where clients reach the API (PUBLIC_URL), for the docs page's servers. */
  publicUrl?: string | undefined;
  /** Bearer token GET /metrics requires (METRICS_TOKEN); absent: none. */
  metricsToken?: string | undefined;
  /** Member numbers an export reads per statement (see ServiceOptions). */
  exportBatchSize?: number | undefined;
  /** Import settings (IMPORT_MAX_BYTES, IMPORT_LEASE_MS, IMPORT_CHUNK_ROWS, IMPORT_WORKERS; see ServiceOptions). */
  imports?: Pick<ServiceOptions, "importMaxBytes" | "importLeaseMs" | "importChunkRows" | "importWorkers"> | undefined;
}

async function rejectMalformedTextHook(request: FastifyRequest): Promise<void> {
  rejectMalformedText(request);
}

async function requireBody(request: { body?: unknown }): Promise<void> {
  if (request.body === undefined) {
    throw new BadRequestError("invalid_request", "/body is required", [{ pointer: "/body", message: "is required" }]);
  }
}

/** The HTTP application, bound to the contract; it does not listen (see main.ts). */
export async function buildApp({
  store,
  adminToken,
  bodyLimit = 1_048_576,
  logger = false,
  rateLimit,
  audienceCacheTtlMs,
  workers = true,
  allowPrivateWebhooks = false,
  eventRetentionDays = 7,
  webhooks = {},
  requestTimeoutMs = 60_000,
  publicUrl,
  metricsToken,
  exportBatchSize,
  imports = {},
}: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger,
    bodyLimit,
    genReqId: newRequestId,
    // Never trust a client-chosen request id: it goes into every log line.
    requestIdHeader: false,
    // Answered below as a problem document instead of Fastify's own JSON.
    return503OnClosing: false,
    // The contract has no HEAD operations; answer them like any other unknown route.
    exposeHeadRoutes: false,
    // A client that trickles its request (headers and body) is cut off with 408 after the
    // request timeout, so slow requests cannot hold connections and buffers indefinitely. Node
    // checks the timeout every connectionsCheckingInterval (30 s unless told otherwise).
    requestTimeout: requestTimeoutMs,
    http: { connectionsCheckingInterval: Math.max(100, Math.min(5_000, Math.floor(requestTimeoutMs / 10))) },
    // Member ids may be 255 characters, percent-encoded up to 12 bytes each in a path.
    routerOptions: { maxParamLength: 3100 },
    clientErrorHandler: clientErrorHandler(requestTimeoutMs),
    // Errors the router raises before any route runs (a malformed %-escape in the path) are
    // problem documents too.
    frameworkErrors: (error, request, reply) =>
      sendProblem(request, reply, new BadRequestError("invalid_request", `The URL is not valid: ${error.message}`)),
  });
  const cache = createAudienceCache(audienceCacheTtlMs === undefined ? {} : { ttlMs: audienceCacheTtlMs });
  const stopWatching = store.watchAudiences({
    changed: (workspaceId, audienceId) => cache.invalidate(workspaceId, audienceId),
    live: (isLive) => cache.setLive(isLive),
    report: (level, message) => app.log[level](message),
  });
  app.addHook("onClose", () => stopWatching());
  const services = createServices(store, {
    cache,
    allowPrivateWebhooks,
    eventRetentionDays,
    ...webhooks,
    exportBatchSize,
    ...imports,
    onBackgroundError: (error) => app.log.error({ err: error }, "background work failed"),
  });
  const handlers = createHandlers({ ready: () => store.ready(), ...services });
  if (workers) {
    app.addHook("onReady", async () => {
      services.workers.start();
      services.importRunner.start();
    });
    app.addHook("onClose", () => Promise.all([services.workers.stop(), services.importRunner.stop()]));
  }
  app.addHook("onClose", async () => services.sender.close());

  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  // Operations whose body is a file (text/csv), streamed to them unread.
  const fileOperations = operationsTaking("text/csv");
  countRequests(app);
  bodyDeadline(app, requestTimeoutMs, fileOperations);
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
  const idempotency = idempotencyHooks(store, idempotencyRepo);
  app.addHook("onClose", () => idempotency.close());
  if (rateLimit) await registerRateLimit(app, store, rateLimitRepo, rateLimit);
  app.setValidatorCompiler(createValidatorCompiler());
  app.setErrorHandler(problemErrorHandler);
  app.setNotFoundHandler(routeNotFound);
  // JSON only: a text/plain body gets 415, not a confusing validation error.
  app.removeContentTypeParser("text/plain");
  strictJsonBodies(app);
  csvBodies(app, fileOperations);
  // The contract names application/problem+json for responses only; fastify-openapi-glue checks
  // every media type it names for a body parser. Problem documents are not accepted as requests.
  app.addContentTypeParser("application/problem+json", (_request, _payload, done) =>
    done(unsupportedMediaType(), undefined),
  );
  // fastify-openapi-glue runs security handlers as preHandler, after the body is parsed and
  // validated. Authenticate first instead: an unauthenticated caller gets 401 whatever it sends,
  // and its body is never parsed.
  //
  // Fastify skips body validation when there is no body at all; the contract's
  // `requestBody.required` is enforced here, before the handler can see an undefined body.
  //
  // Hooks only some operations need are attached to those routes, so that the others (the hot
  // reads above all) do not pay for them: the text guard where there is a body or a query, the
  // Idempotency-Key handling on POST (not on a file upload, whose body is not read before it
  // runs; the contract offers no Idempotency-Key there), the media type of a file upload.
  const bodyRequired = operationsRequiringBody();
  app.addHook("onRoute", (route) => {
    const schema = route.schema as { operationId?: string; body?: unknown; querystring?: unknown } | undefined;
    const takesFile = schema?.operationId !== undefined && fileOperations.has(schema.operationId);
    if (route.preHandler) {
      const authenticate = route.preHandler as NonNullable<typeof route.onRequest>;
      route.onRequest = takesFile ? [authenticate, requireCsvBody].flat() : authenticate;
      route.preHandler = undefined;
    }
    const preValidation = [];
    if (schema?.body || schema?.querystring) preValidation.push(rejectMalformedTextHook);
    if (schema?.operationId && bodyRequired.has(schema.operationId)) preValidation.push(requireBody);
    if (preValidation.length > 0) route.preValidation = preValidation;
    if (route.method === "POST" && !takesFile) {
      route.preHandler = idempotency.preHandler;
      route.onSend = idempotency.onSend;
    }
  });
  await app.register(docsRoutes, { publicUrl });
  metricsRoute(app, { token: metricsToken });
  await app.register(openapiGlue, {
    specification: readContract(),
    serviceHandlers: handlers,
    securityHandlers: createSecurityHandlers({ auth: services.auth, adminToken }),
  });
  return app;
}
