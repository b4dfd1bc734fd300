import { describe, expect } from "vitest";
import type { paths } from "../../generated/api.d.ts";
// Its snapshots read the whole store: a server of its own, which no other file writes to.
import { testOnOwnServer as test } from "../support/fixture.ts";
import { type ContractUrl, call, type LiveServer, type RawResponse, urlOf } from "../support/live-server.ts";
import { reportedRequests } from "../support/rate-limits.ts";
import { diffDb, snapshotDb } from "./db-state.ts";
import {
  apiView,
  type Ids,
  operationShapes,
  populate,
  secretsOf,
  type Tenant,
  validRequest,
} from "./tenant-fixtures.ts";

/**
 * Tenant isolation (OWASP API1, broken object level authorization): workspace A's key tries every
 * operation on workspace B (B's workspace id, audience ids, member ids, cursors, audience ids in
 * bodies) and must neither read nor change anything of B's. Every answer to A is searched for
 * anything of B's (ids, names, e-mails, field values, key parts) that A did not send itself; B's
 * rows and B's own view through the API must be exactly as before; and a refused attempt must
 * write nothing anywhere.
 *
 * The attempts are deliberately outside what the typed SDK would send (another tenant's ids, forged
 * keys, paths generated from the contract), so they go through call(), checked against the contract.
 */
const shapes = operationShapes();
const figures = { attempts: 0, leaks: 0, violations: 0 };
const problems: string[] = [];

/** Both tenants, populated once for the file, and what B looked like before A's attempts. */
const it = test.extend("tenants", { scope: "file" }, async ({ server }) => {
  const A = await populate(server, "alpha");
  const B = await populate(server, "bravo");
  const asB = (url: string) => call(server, "GET", url, { token: B.ws.key });
  /** B's own answers, to show the leak detector recognises B's data. */
  const bOwn = [
    await asB(urlOf("/v0/workspaces/{workspaceId}/members", { workspaceId: B.ws.id }, "limit=500")),
    await asB(urlOf("/v0/workspaces/{workspaceId}/audiences", { workspaceId: B.ws.id }, "includeArchived=true")),
  ] as const;
  const bViewBefore = await apiView(B);
  // Last: B's own requests count against B's rate limit, A's must not. On PostgreSQL a process
  // adds its counts to the database every 0.1 s: wait until all of B's have arrived there. The
  // server counts B's requests of this window exactly, and says so in B's last answer.
  const last = await asB(urlOf("/v0/workspaces/{workspaceId}/audiences", { workspaceId: B.ws.id }));
  const counted = Number(last.headers.get("ratelimit-limit")) - Number(last.headers.get("ratelimit-remaining"));
  if (server.store.kind === "postgres") {
    await expect.poll(() => reportedRequests(server.store, B.ws.id), { timeout: 10_000 }).toBe(counted);
  }
  const bRowsBefore = await snapshotDb(server.store, { workspaceId: B.ws.id, withRateLimits: true });
  return { A, B, secrets: secretsOf(B), bOwn, bViewBefore, bRowsBefore };
});

interface Request<M extends string, P extends keyof paths> {
  method: M;
  path: ContractUrl<P> | string;
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
}
interface Expect {
  status: number;
  code?: string;
}
const OK = { status: 200 };
const CREATED = { status: 201 };
const NO_AUDIENCE = { status: 404, code: "audience_not_found" };
const NO_MEMBER = { status: 404, code: "member_not_found" };
const BAD_CURSOR = { status: 400, code: "invalid_cursor" };
const FORBIDDEN = { status: 403, code: "forbidden" };
const UNAUTHORIZED = { status: 401, code: "unauthorized" };

/** B's secrets found in an answer that the request did not carry itself. */
function leakedIn(secrets: string[], response: RawResponse, sent: string): string[] {
  const answer = `${response.text} ${[...response.headers].join(" ")}`.toLowerCase();
  return secrets.filter((s) => answer.includes(s.toLowerCase()) && !sent.toLowerCase().includes(s.toLowerCase()));
}

/**
 * One cross-workspace attempt with A's key (or the token given): checks the answer's status and
 * code, searches it for B's data, and for a refused attempt checks that no table changed.
 */
function attemptsOn(server: LiveServer, { A, secrets }: { A: Tenant; secrets: string[] }) {
  return async <M extends string, P extends keyof paths = never>(
    label: string,
    request: Request<M, P>,
    expected: Expect,
  ) => {
    const { method, path, ...options } = request;
    figures.attempts++;
    const before = expected.status >= 400 ? await snapshotDb(server.store) : undefined;
    const response = await call(server, method, path, { token: A.ws.key, ...options });
    const what = `${label}: ${method} ${path} -> ${response.status} ${response.problem?.code ?? ""}`;
    const sent = `${method} ${decodeURIComponent(path)} ${JSON.stringify(options.body ?? null)}`;
    const leaked = leakedIn(secrets, response, sent);
    if (leaked.length > 0) {
      figures.leaks++;
      problems.push(`LEAK ${what} reveals ${leaked.join(", ")}`);
    }
    if (response.status !== expected.status || (expected.code && response.problem?.code !== expected.code)) {
      if (expected.status >= 400 && response.status < 400) figures.violations++;
      problems.push(`${what}, expected ${expected.status} ${expected.code ?? ""}`);
    }
    const changed = before ? diffDb(before, await snapshotDb(server.store)) : [];
    if (changed.length > 0) {
      figures.violations++;
      problems.push(`WRITE ${what} changed ${changed.join("; ")}`);
    }
    expect.soft(response.status, what).toBe(expected.status);
    if (expected.code) expect.soft(response.problem?.code, what).toBe(expected.code);
    return response;
  };
}
const withAttempt = it.extend("attempt", { scope: "file" }, ({ server, tenants }) => attemptsOn(server, tenants));

const idsOf = (t: Tenant, memberId = t.memberIds[0] as string): Ids => ({
  workspaceId: t.ws.id,
  audienceId: t.audiences.manual,
  otherAudienceId: t.audiences.rule,
  memberId,
  keyId: t.keyId,
  webhookId: t.webhook.id,
  deliveryId: t.webhook.deliveryId,
  importId: t.importId,
  fieldKey: t.fieldKey,
});

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const MEMBERS = "/v0/workspaces/{workspaceId}/members";
const MEMBER = "/v0/workspaces/{workspaceId}/members/{memberId}";

describe("tenant isolation between workspaces A and B", () => {
  withAttempt(
    "has a leak detector that recognises B's data (checked on B's own answers)",
    ({ tenants: { B, bOwn, secrets } }) => {
      const [members, audiences] = bOwn;
      expect(leakedIn(secrets, members, "")).toEqual(expect.arrayContaining([B.hex, ...B.memberIds, ...B.emails]));
      expect(leakedIn(secrets, audiences, "")).toEqual(expect.arrayContaining([...B.names, B.audiences.manual]));
    },
  );

  withAttempt(
    "answers A's key on B's workspace path with 403 for every workspace operation and 401 for admin ones",
    async ({ tenants: { B }, attempt }) => {
      const notScoped = shapes.filter((s) => s.security === "none").map((s) => s.operationId);
      expect(notScoped.sort()).toEqual(["getHealth", "getReadiness"]);
      for (const shape of shapes.filter((s) => s.security !== "none")) {
        const expected = shape.security === "adminToken" ? UNAUTHORIZED : FORBIDDEN;
        await attempt(`${shape.operationId} on B's workspace`, validRequest(shape, idsOf(B)), expected);
      }
    },
  );

  withAttempt(
    "answers 404 audience_not_found for B's audience ids in A's paths, archived ones included",
    async ({ tenants: { A, B }, attempt }) => {
      const withAudience = shapes.filter((s) => s.path.includes("{audienceId}"));
      expect(withAudience.length).toBeGreaterThanOrEqual(9);
      for (const shape of withAudience) {
        for (const audienceId of [B.audiences.manual, B.audiences.rule, B.audiences.archived]) {
          const request = validRequest(shape, { ...idsOf(A), audienceId });
          await attempt(`${shape.operationId} with B's audience`, request, NO_AUDIENCE);
        }
      }
      for (const audienceId of [B.audiences.manual, B.audiences.archived]) {
        const path = urlOf(MEMBERS, { workspaceId: A.ws.id }, new URLSearchParams({ audienceId }).toString());
        await attempt("listMembers of B's audience", { method: "GET", path }, NO_AUDIENCE);
      }
    },
  );

  withAttempt(
    "answers 404 for B's webhook and delivery ids in A's webhook paths",
    async ({ tenants: { A, B }, attempt }) => {
      const withWebhook = shapes.filter((s) => s.path.includes("{webhookId}"));
      expect(withWebhook.length).toBeGreaterThanOrEqual(7);
      for (const shape of withWebhook) {
        const request = validRequest(shape, { ...idsOf(A), webhookId: B.webhook.id });
        await attempt(`${shape.operationId} with B's webhook`, request, { status: 404, code: "webhook_not_found" });
      }
      const retry = shapes.find((s) => s.operationId === "retryWebhookDelivery");
      if (!retry) throw new Error("retryWebhookDelivery is not in the contract");
      await attempt(
        "retry B's delivery through A's webhook",
        validRequest(retry, { ...idsOf(A), deliveryId: B.webhook.deliveryId }),
        { status: 404, code: "delivery_not_found" },
      );
      const body = { url: "https://93.184.215.14/probe", audienceIds: [B.audiences.manual], enabled: false };
      const path = urlOf("/v0/workspaces/{workspaceId}/webhooks", { workspaceId: A.ws.id });
      await attempt("a webhook on B's audience", { method: "POST", path, body }, NO_AUDIENCE);
    },
  );

  withAttempt(
    "answers 404 member_not_found for B's member ids in A's member paths",
    async ({ tenants: { A, B }, attempt }) => {
      const withMember = shapes.filter((s) => s.path.includes("{memberId}"));
      expect(withMember.length).toBeGreaterThanOrEqual(3);
      for (const shape of withMember) {
        for (const memberId of [...B.memberIds, B.shared.id]) {
          await attempt(`${shape.operationId} with B's member`, validRequest(shape, idsOf(A, memberId)), NO_MEMBER);
        }
      }
    },
  );

  withAttempt(
    "finds and changes nothing of B's through B's ids and data in A's bodies and queries",
    async ({ tenants: { A, B }, attempt }) => {
      const workspaceId = A.ws.id;
      const { manual, rule, archived } = B.audiences;
      for (const audienceIds of [
        [A.audiences.manual, manual],
        [manual, A.audiences.manual],
        [manual, rule],
        [A.audiences.manual, archived],
      ]) {
        const body = { name: `Merge probe ${audienceIds.join(" ")}`, audienceIds };
        const path = urlOf(`${AUDIENCES}/merge`, { workspaceId });
        await attempt("merge with B's audiences", { method: "POST", path, body }, NO_AUDIENCE);
      }
      const memberIds = B.memberIds;
      const path = urlOf(`${AUDIENCE}/members`, { workspaceId, audienceId: A.audiences.manual });
      const removed = await attempt("remove B's members", { method: "DELETE", path, body: { memberIds } }, OK);
      expect(removed.data).toEqual({ removed: 0, notMembers: memberIds.length });
      const deleted = await attempt(
        "delete B's members",
        { method: "DELETE", path: urlOf(MEMBERS, { workspaceId }), body: { memberIds } },
        OK,
      );
      expect(deleted.data).toEqual({ deleted: 0, notFound: memberIds.length });
      const fieldPath = urlOf("/v0/workspaces/{workspaceId}/fields/{fieldKey}", { workspaceId, fieldKey: B.fieldKey });
      await attempt(
        "remove B's field type",
        { method: "DELETE", path: fieldPath },
        { status: 404, code: "field_not_found" },
      );
      const matchB = [
        { field: "anyEmail", op: "endsWith", value: `@bravo-${B.hex}.example` },
        { field: "fields.company", op: "eq", value: `BravoCorp${B.hex}` },
        { field: "id", op: "in", value: memberIds },
        { field: "fields.secret", op: "contains", value: B.hex },
      ];
      for (const filter of [...matchB, { any: matchB }]) {
        const preview = await attempt(
          "preview B's members",
          { method: "POST", path: urlOf(`${AUDIENCES}/preview`, { workspaceId }), body: { filter } },
          OK,
        );
        expect(preview.data).toEqual({ totalCount: 0, results: [] });
      }
      const spare = { workspaceId, audienceId: A.audiences.spare };
      const set = await attempt(
        "a rule matching B's members",
        { method: "PUT", path: urlOf(`${AUDIENCE}/filter`, spare), body: { filter: { any: matchB } } },
        OK,
      );
      expect(set.data?.memberCount).toBe(0);
      const ruled = await attempt(
        "that rule's members",
        { method: "GET", path: urlOf(`${AUDIENCE}/members`, spare) },
        OK,
      );
      expect(ruled.data?.totalCount).toBe(0);
      for (const search of [B.emails[0] as string, `BravoFirst1${B.hex}`, B.hex]) {
        const path = urlOf(MEMBERS, { workspaceId }, new URLSearchParams({ search }).toString());
        const found = await attempt("search for B's members", { method: "GET", path }, OK);
        expect(found.data?.totalCount).toBe(0);
      }
      for (const search of [...B.names, B.hex]) {
        const query = new URLSearchParams({ search, includeArchived: "true" }).toString();
        const path = urlOf(AUDIENCES, { workspaceId }, query);
        const found = await attempt("search for B's audiences", { method: "GET", path }, OK);
        expect(found.data?.results).toEqual([]);
      }
    },
  );

  withAttempt(
    "refuses B's cursors on every listing of A's with 400 invalid_cursor",
    async ({ tenants: { A, B }, attempt }) => {
      const workspaceId = A.ws.id;
      const listings: Array<[string, Record<string, string>]> = [
        [urlOf(`${AUDIENCE}/members`, { workspaceId, audienceId: A.audiences.manual }), {}],
        [urlOf(MEMBERS, { workspaceId }), {}],
        [urlOf(MEMBERS, { workspaceId }), { audienceId: A.audiences.manual }],
      ];
      const memberCursors = Object.entries(B.cursors).filter(([name]) => name !== "events" && name !== "deliveries");
      for (const [listing, params] of listings) {
        for (const [name, cursor] of memberCursors) {
          for (const direction of ["after", "before"]) {
            const path = `${listing}?${new URLSearchParams({ ...params, [direction]: cursor })}`;
            await attempt(`B's ${name} cursor as ${direction}`, { method: "GET", path }, BAD_CURSOR);
          }
        }
      }
      // The feed and the delivery log refuse B's cursors too, and any member listing's.
      const feed = urlOf("/v0/workspaces/{workspaceId}/events", { workspaceId });
      const log = urlOf("/v0/workspaces/{workspaceId}/webhooks/{webhookId}/deliveries", {
        workspaceId,
        webhookId: A.webhook.id,
      });
      for (const listing of [feed, log]) {
        for (const [name, cursor] of Object.entries(B.cursors)) {
          const path = `${listing}?${new URLSearchParams({ after: cursor })}`;
          await attempt(`B's ${name} cursor on ${listing}`, { method: "GET", path }, BAD_CURSOR);
        }
      }
    },
  );

  withAttempt(
    "refuses A's key on admin operations, and keys forged from A's and B's parts, with 401",
    async ({ tenants: { A, B }, attempt }) => {
      const keys = (workspaceId: string) => urlOf("/v0/workspaces/{workspaceId}/api-keys", { workspaceId });
      const key = (t: Tenant) =>
        urlOf("/v0/workspaces/{workspaceId}/api-keys/{keyId}", { workspaceId: t.ws.id, keyId: t.keyId });
      const admin: Array<Request<string, keyof paths>> = [
        { method: "GET", path: urlOf("/v0/workspaces", undefined) },
        { method: "POST", path: urlOf("/v0/workspaces", undefined), body: { name: "Intruder" } },
        { method: "POST", path: keys(A.ws.id), body: { name: "escalate" } },
        { method: "POST", path: keys(B.ws.id), body: { name: "escalate" } },
        { method: "DELETE", path: key(B) },
        { method: "DELETE", path: key(A) },
      ];
      for (const request of admin) await attempt("A's key on an admin operation", request, UNAUTHORIZED);
      const [, aWs, aKey, aSecret] = A.ws.key.split("_");
      const [, bWs, bKey] = B.ws.key.split("_");
      const forged = [`ak_${bWs}_${aKey}_${aSecret}`, `ak_${aWs}_${bKey}_${aSecret}`, `ak_${bWs}_${bKey}_${aSecret}`];
      for (const token of [...forged, B.keyId]) {
        for (const target of [B.ws.id, A.ws.id]) {
          const request = { method: "GET", path: urlOf(AUDIENCES, { workspaceId: target }), token };
          await attempt("a key forged from A's and B's parts", request, UNAUTHORIZED);
        }
      }
    },
  );

  withAttempt(
    "gives A its own members and audiences for ids, e-mails, names and idempotency keys B also uses",
    async ({ tenants: { A, B }, attempt }) => {
      const workspaceId = A.ws.id;
      const member = urlOf(MEMBER, { workspaceId, memberId: B.shared.id });
      const own = { id: B.shared.id, email: B.shared.email, fields: { firstName: "AlphaOwn" } };
      const addPath = urlOf(`${AUDIENCE}/members`, { workspaceId, audienceId: A.audiences.manual });
      const added = await attempt(
        "add a member with B's id and e-mail",
        { method: "POST", path: addPath, body: { members: [own] } },
        OK,
      );
      expect(added.data).toEqual({ added: 1, alreadyMembers: 0, created: 1, merged: 0 });
      const read = await attempt("read A's member with B's id", { method: "GET", path: member }, OK);
      expect(read.data).toMatchObject({ id: B.shared.id, email: B.shared.email, alternativeEmails: [] });
      expect(read.data?.fields).toEqual({ firstName: "AlphaOwn", lastName: "", role: "", company: "" });
      const upserted = await attempt(
        "upsert by B's alternative e-mail",
        { method: "POST", path: urlOf(MEMBERS, { workspaceId }), body: { members: [{ email: B.shared.altEmail }] } },
        OK,
      );
      expect(upserted.data?.results[0]?.status).toBe("created");
      expect(upserted.data?.results[0]?.id).not.toBe(B.shared.id);
      const patch = { method: "PATCH" as const, path: member, body: { fields: { company: "AlphaCo" } } };
      expect((await attempt("update A's member with B's id", patch, OK)).data?.fields.company).toBe("AlphaCo");
      const audiences = await attempt(
        "that member's audiences",
        { method: "GET", path: urlOf(`${MEMBER}/audiences`, { workspaceId, memberId: B.shared.id }) },
        OK,
      );
      expect(audiences.data?.results.map((a) => a.id)).toEqual([A.audiences.manual]);
      const create = {
        method: "POST" as const,
        path: urlOf(AUDIENCES, { workspaceId }),
        body: { name: B.shared.audienceName },
      };
      expect((await attempt("an audience named like B's", create, CREATED)).data?.id).not.toBe(B.audiences.sharedName);
      const headers = { "idempotency-key": B.shared.idemKey };
      const retry = {
        method: "POST" as const,
        path: urlOf(AUDIENCES, { workspaceId }),
        body: { name: B.shared.idemName },
        headers,
      };
      const replay = await attempt("B's idempotency key and body", retry, CREATED);
      expect(replay.headers.get("idempotent-replayed")).toBeNull();
      expect(replay.data?.id).not.toBe(B.audiences.idem);
      const remove = { method: "DELETE", path: urlOf(MEMBERS, { workspaceId }), body: { memberIds: [B.shared.id] } };
      expect((await attempt("delete A's member with B's id", remove, OK)).data).toEqual({ deleted: 1, notFound: 0 });
    },
  );

  withAttempt(
    "left B's rows and B's view of its data unchanged, and let nothing of B's reach A",
    async ({ server, tenants: { B, bRowsBefore, bViewBefore } }) => {
      // B's rows first: B's own requests below count against B's rate limit.
      const rowsChanged = diffDb(
        bRowsBefore,
        await snapshotDb(server.store, { workspaceId: B.ws.id, withRateLimits: true }),
      );
      const viewAfter = await apiView(B);
      const shared = await B.ws.api.GET(MEMBER, { params: { path: { workspaceId: B.ws.id, memberId: B.shared.id } } });
      expect(shared).toMatchObject({
        id: B.shared.id,
        email: B.shared.email,
        alternativeEmails: [B.shared.altEmail],
      });
      const viewChanged = JSON.stringify(viewAfter) !== JSON.stringify(bViewBefore);
      if (rowsChanged.length > 0 || viewChanged) figures.leaks++;
      console.log(
        [
          `Tenant isolation (${server.store.kind} store):`,
          `  isolation attempts: ${figures.attempts}`,
          `  leaks (B's data in an answer to A, or B's data changed): ${figures.leaks}`,
          `  violations (a cross-workspace attempt that succeeded, or a refused one that wrote): ${figures.violations}`,
          `  B's rows changed: ${rowsChanged.length === 0 ? "none" : rowsChanged.join("; ")}`,
          `  B's API view changed: ${viewChanged ? "yes" : "no"}`,
          ...problems.map((p) => `  ! ${p}`),
        ].join("\n"),
      );
      expect(rowsChanged).toEqual([]);
      expect(viewAfter).toEqual(bViewBefore);
      expect(figures.leaks).toBe(0);
      expect(figures.violations).toBe(0);
      expect(problems).toEqual([]);
    },
  );
});
