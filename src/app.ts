import { fileURLToPath } from "node:url";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import openapiGlue from "fastify-openapi-glue";
import { randomBase62 } from "./domain/ids.ts";
import { createHandlers } from "./http/handlers.ts";
import { problemErrorHandler, routeNotFound } from "./http/problem.ts";
import { createSecurityHandlers } from "./http/security.ts";
import { createValidatorCompiler } from "./http/validation.ts";
import { createAdminService } from "./services/admin-service.ts";
import { createAudienceMemberService } from "./services/audience-member-service.ts";
import { createAudienceService } from "./services/audience-service.ts";
import { createAuthService } from "./services/auth-service.ts";
import type { Store } from "./store/database.ts";

export const CONTRACT_PATH = fileURLToPath(new URL("../openapi/openapi.yaml", import.meta.url));

export interface AppOptions {
  store: Store;
  adminToken?: string | undefined;
  bodyLimit?: number;
  logger?: FastifyServerOptions["logger"];
}

/** The HTTP application, bound to the contract; it does not listen (see main.ts). */
export async function buildApp({ store, adminToken, bodyLimit = 1_048_576, logger = false }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger,
    bodyLimit,
    genReqId: () => `req_${randomBase62(16)}`,
    // Never trust a client-chosen request id: it goes into every log line.
    requestIdHeader: false,
    return503OnClosing: true,
  });
  const auth = createAuthService({ store });
  const handlers = createHandlers({
    admin: createAdminService({ store, auth }),
    audiences: createAudienceService({ store }),
    audienceMembers: createAudienceMemberService({ store }),
  });

  app.setValidatorCompiler(createValidatorCompiler());
  app.setErrorHandler(problemErrorHandler);
  app.setNotFoundHandler(routeNotFound);
  // JSON only: a text/plain body gets 415, not a confusing validation error.
  app.removeContentTypeParser("text/plain");
  // fastify-openapi-glue runs security handlers as preHandler, after the body is parsed and
  // validated. Authenticate first instead: an unauthenticated caller gets 401 whatever it sends,
  // and its body is never parsed.
  app.addHook("onRoute", (route) => {
    if (route.preHandler) {
      route.onRequest = route.preHandler as typeof route.onRequest;
      route.preHandler = undefined;
    }
  });
  await app.register(openapiGlue, {
    specification: CONTRACT_PATH,
    serviceHandlers: handlers,
    securityHandlers: createSecurityHandlers({ auth, adminToken }),
  });
  return app;
}
