import { timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { ForbiddenError, UnauthorizedError } from "../../domain/errors.ts";

/** The bearer token of the request, if it sent one. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}

/** Whether the request's bearer token is the expected one (compared in constant time). */
export function sendsToken(request: FastifyRequest, expected: Buffer): boolean {
  const given = Buffer.from(bearerToken(request) ?? "");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Handlers for the contract's security schemes, by scheme name (fastify-openapi-glue calls them). */
/** Who a valid API key belongs to. */
export interface Principal {
  workspaceId: string;
  keyId: string;
}

export interface SecurityDeps {
  /** The principal of a workspace API key; throws UnauthorizedError for a missing or bad one. */
  auth: { authenticate(token: string | undefined): Promise<Principal> };
  adminToken?: string | undefined;
}

export function createSecurityHandlers({ auth, adminToken }: SecurityDeps) {
  const expected = adminToken === undefined ? undefined : Buffer.from(adminToken);
  return {
    /** A workspace API key, valid for the workspace in the path only. */
    async workspaceKey(request: FastifyRequest): Promise<void> {
      const principal = await auth.authenticate(bearerToken(request));
      const { workspaceId } = request.params as { workspaceId?: string };
      if (workspaceId !== principal.workspaceId) throw new ForbiddenError();
      request.principal = principal;
    },

    async adminToken(request: FastifyRequest): Promise<void> {
      if (expected === undefined) {
        throw new UnauthorizedError("Admin operations are disabled: start the server with ADMIN_TOKEN set.");
      }
      if (!sendsToken(request, expected)) {
        throw new UnauthorizedError("Send the admin token as: Authorization: Bearer <token>");
      }
      request.principal = { workspaceId: "", keyId: "admin" };
    },
  };
}
