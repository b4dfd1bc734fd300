import { audienceRepo } from "../store/audience-repo.ts";
import type { Store } from "../store/database.ts";
import { lockRepo } from "../store/lock-repo.ts";
import { memberPageRepo } from "../store/member-page.ts";
import { memberRepo } from "../store/member-repo.ts";
import { membershipRepo } from "../store/membership-repo.ts";
import { apiKeyRepo, workspaceRepo } from "../store/workspace-repo.ts";
import { createAdminService } from "./admin-service.ts";
import { type AudienceCache, createAudienceCache } from "./audience-cache.ts";
import { createAudienceMemberService } from "./audience-member-service.ts";
import { createAudienceService } from "./audience-service.ts";
import { createAuthService } from "./auth-service.ts";
import { createMemberPages } from "./member-pages.ts";
import { createMemberService } from "./member-service.ts";
import { createMembershipService, type MembershipListener } from "./membership-service.ts";

export interface ServiceOptions {
  /** The audience cache for getAudience (a fresh one per call when absent). */
  cache?: AudienceCache;
  /** Told of every membership change, in the transaction that made it. */
  membershipListeners?: MembershipListener[];
}

/** The membership module on the store's repositories. */
export function createMembership(store: Store, listeners: MembershipListener[] = []) {
  return createMembershipService({
    store,
    locks: lockRepo,
    sets: membershipRepo,
    members: memberRepo,
    audiences: audienceRepo,
    listeners,
  });
}

/**
 * The composition root: every service, given the repositories it uses. Nothing else imports the
 * repository objects for a service; services see only the narrow parts they declare.
 */
export function createServices(store: Store, options: ServiceOptions = {}) {
  const cache = options.cache ?? createAudienceCache();
  const membership = createMembership(store, options.membershipListeners);
  const pages = createMemberPages({ store, pages: memberPageRepo, audiences: audienceRepo });
  const auth = createAuthService({ store, apiKeys: apiKeyRepo });
  return {
    auth,
    membership,
    admin: createAdminService({ store, auth, workspaces: workspaceRepo, apiKeys: apiKeyRepo }),
    audiences: createAudienceService({ store, cache, membership, audiences: audienceRepo, members: memberRepo }),
    audienceMembers: createAudienceMemberService({ membership, members: memberRepo, pages }),
    members: createMemberService({
      store,
      membership,
      members: memberRepo,
      memberAudiences: membershipRepo,
      pages,
    }),
  };
}

export type Services = ReturnType<typeof createServices>;
