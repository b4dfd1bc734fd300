import { randomBytes } from "node:crypto";
import {
  addMembers,
  createAudience,
  createWorkspace,
  type TestWorkspace,
  upsertMembers,
} from "../support/factories.ts";
import { importCsv } from "../support/imports.ts";
import { type OperationShape, operationShapes } from "./contract-shapes.ts";

/** A workspace full of data that can be recognised anywhere: every value of it contains `hex`. */
export interface Tenant {
  ws: TestWorkspace;
  hex: string;
  keyId: string;
  audiences: { manual: string; rule: string; archived: string; spare: string; idem: string; sharedName: string };
  /** A disabled webhook (nothing is delivered to it) and a delivery of it, with its secret. */
  webhook: { id: string; deliveryId: string; secret: string };
  /** An import job of the workspace, ended. */
  importId: string;
  /** A custom field with a declared type (number). */
  fieldKey: string;
  memberIds: string[];
  emails: string[];
  values: string[];
  names: string[];
  /** Values another workspace may legitimately use too (client-chosen ids, e-mails, names). */
  shared: { id: string; email: string; altEmail: string; audienceName: string; idemKey: string; idemName: string };
  cursors: {
    audienceStart: string;
    audienceEnd: string;
    workspace: string;
    byAudienceQuery: string;
    events: string;
    deliveries: string;
  };
}

const hex = () => randomBytes(4).toString("hex");

const AUDIENCES = "/v0/workspaces/{workspaceId}/audiences";
const AUDIENCE = "/v0/workspaces/{workspaceId}/audiences/{audienceId}";
const MEMBERS = "/v0/workspaces/{workspaceId}/members";
const MEMBER = "/v0/workspaces/{workspaceId}/members/{memberId}";
const WEBHOOKS = "/v0/workspaces/{workspaceId}/webhooks";
const WEBHOOK = "/v0/workspaces/{workspaceId}/webhooks/{webhookId}";

export async function populate(server: { baseUrl: string }, tag: string): Promise<Tenant> {
  const ws = await createWorkspace(server);
  const workspaceId = ws.id;
  const h = hex();
  const s = hex();
  const Tag = tag[0]?.toUpperCase() + tag.slice(1);
  const member = (n: number) => ({
    id: `${tag}-m${n}-${h}`,
    email: `${tag}.m${n}.${h}@${tag}-${h}.example`,
    alternativeEmails: [`${tag}.m${n}.alt.${h}@${tag}-${h}.example`],
    fields: { firstName: `${Tag}First${n}${h}`, company: `${Tag}Corp${h}`, secret: `${tag}-secret-${n}-${h}` },
  });
  const members = [1, 2, 3].map(member);
  const shared = {
    id: `shared-${s}`,
    email: `shared.${s}@shared-${s}.example`,
    altEmail: `shared.alt.${s}@shared-${s}.example`,
    audienceName: `Shared name ${s}`,
    idemKey: `idem-${s}`,
    idemName: `Idem ${s}`,
  };
  const sharedMember = {
    id: shared.id,
    email: shared.email,
    alternativeEmails: [shared.altEmail],
    fields: { firstName: `${Tag}Shared${h}`, secret: `${tag}-shared-secret-${h}` },
  };
  await upsertMembers(ws, [...members, sharedMember]);
  const names = [`${Tag} Manual ${h}`, `${Tag} Rule ${h}`, `${Tag} Archived ${h}`, `${Tag} Spare ${h}`];
  const [manual = "", rule = "", archived = "", spare = ""] = await Promise.all(
    names.map((name) => createAudience(ws, name)),
  );
  const sharedName = await createAudience(ws, shared.audienceName);
  const [m1 = "", m2 = "", m3 = ""] = members.map((m) => m.id);
  await addMembers(ws, manual, { memberIds: [m1, m2, shared.id] });
  await addMembers(ws, archived, { memberIds: [m3] });
  await ws.api.PUT(`${AUDIENCE}/filter`, {
    params: { path: { workspaceId, audienceId: rule } },
    body: { filter: { field: "fields.company", op: "eq", value: `${Tag}Corp${h}` } },
  });
  await ws.api.DELETE(AUDIENCE, { params: { path: { workspaceId, audienceId: archived } } });
  const idem = await ws.api.POST(AUDIENCES, {
    params: { path: { workspaceId } },
    body: { name: shared.idemName },
    headers: { "idempotency-key": shared.idemKey },
  });
  const audiences = {
    manual,
    rule,
    archived,
    spare,
    sharedName,
    idem: idem.id,
  };
  const firstOf = async (query: { audienceId?: string }) =>
    (await ws.api.GET(MEMBERS, { params: { path: { workspaceId }, query: { limit: 1, ...query } } })).pageInfo;
  const page = (
    await ws.api.GET(`${AUDIENCE}/members`, {
      params: { path: { workspaceId, audienceId: manual }, query: { limit: 1 } },
    })
  ).pageInfo;
  const all = await firstOf({});
  const byQuery = await firstOf({ audienceId: manual });
  const webhook = await ws.api.POST(WEBHOOKS, {
    params: { path: { workspaceId } },
    body: {
      url: `https://93.184.215.14/${tag}-${h}`,
      audienceIds: [manual],
      description: `${Tag} hook ${h}`,
      enabled: false,
    },
  });
  const webhookPath = { workspaceId, webhookId: webhook.id };
  const delivery = await ws.api.POST(`${WEBHOOK}/test`, { params: { path: webhookPath } });
  const deliveries = await ws.api.GET(`${WEBHOOK}/deliveries`, { params: { path: webhookPath, query: { limit: 1 } } });
  const events = await ws.api.GET("/v0/workspaces/{workspaceId}/events", {
    params: { path: { workspaceId }, query: { limit: 1 } },
  });
  const fieldKey = `${tag}Score${h}`;
  await ws.api.PUT("/v0/workspaces/{workspaceId}/fields/{fieldKey}", {
    params: { path: { workspaceId, fieldKey } },
    body: { type: "number" },
  });
  const imported = await importCsv(ws, `email,company\nimported-${h}@example.com,${Tag} imports ${h}\n`);
  return {
    ws,
    hex: h,
    keyId: ws.keyId,
    audiences,
    webhook: { id: webhook.id, deliveryId: delivery.id, secret: webhook.secret },
    importId: imported.id,
    fieldKey,
    memberIds: members.map((m) => m.id),
    emails: members.flatMap((m) => [m.email, ...m.alternativeEmails]),
    values: [...members.flatMap((m) => Object.values(m.fields)), ...Object.values(sharedMember.fields)],
    names,
    shared,
    cursors: {
      audienceStart: page.startCursor,
      audienceEnd: page.endCursor,
      workspace: all.endCursor,
      byAudienceQuery: byQuery.endCursor,
      events: events.pageInfo.endCursor,
      deliveries: deliveries.pageInfo.endCursor,
    },
  };
}

/** What must never reach another workspace's key: everything of the tenant except its shared values. */
export function secretsOf(t: Tenant): string[] {
  const ids = Object.values(t.audiences);
  const secret = t.ws.key.split("_")[3] ?? t.ws.key;
  const { webhook } = t;
  return [
    ...[t.hex, t.ws.id, t.keyId, t.ws.key, secret, ...ids, ...t.names, ...t.memberIds, ...t.emails, ...t.values],
    ...[webhook.id, webhook.deliveryId, webhook.secret, t.importId, t.fieldKey],
  ];
}

/** Everything the tenant can observe of its own data through the API: each answer's status and body. */
export async function apiView(t: Tenant): Promise<unknown> {
  const { api, id: workspaceId } = t.ws;
  const seen = ({ data, error, response }: { data?: unknown; error?: unknown; response: Response }) => ({
    status: response.status,
    body: data ?? error,
  });
  const audiences = (await api.GET(AUDIENCES, { params: { path: { workspaceId }, query: { includeArchived: true } } }))
    .results;
  const members = (await api.GET(MEMBERS, { params: { path: { workspaceId }, query: { limit: 500 } } })).results;
  const view: Record<string, unknown> = { audiences, members };
  for (const { id: audienceId } of audiences) {
    const params = { path: { workspaceId, audienceId } };
    view[`audience ${audienceId}`] = [
      seen(await api.raw.GET(AUDIENCE, { params })),
      seen(await api.raw.GET(`${AUDIENCE}/filter`, { params })),
      seen(await api.raw.GET(`${AUDIENCE}/members`, { params: { ...params, query: { limit: 500 } } })),
    ];
  }
  for (const { id: memberId } of members) {
    const params = { path: { workspaceId, memberId } };
    view[`member ${memberId}`] = [
      seen(await api.raw.GET(MEMBER, { params })),
      seen(await api.raw.GET(`${MEMBER}/audiences`, { params })),
    ];
  }
  const webhooks = (await api.GET(WEBHOOKS, { params: { path: { workspaceId } } })).results;
  view.webhooks = webhooks;
  for (const { id: webhookId } of webhooks) {
    view[`deliveries ${webhookId}`] = await api.GET(`${WEBHOOK}/deliveries`, {
      params: { path: { workspaceId, webhookId } },
    });
  }
  view.fields = await api.GET("/v0/workspaces/{workspaceId}/fields", { params: { path: { workspaceId } } });
  view.events = await api.GET("/v0/workspaces/{workspaceId}/events", {
    params: { path: { workspaceId }, query: { limit: 1000 } },
  });
  return view;
}

export interface Ids {
  workspaceId: string;
  audienceId: string;
  otherAudienceId: string;
  memberId: string;
  keyId: string;
  webhookId: string;
  deliveryId: string;
  importId: string;
  fieldKey: string;
}

/** A valid request for the operation on these ids (path, and a body when it takes one). */
export function validRequest(shape: OperationShape, ids: Ids): { method: string; path: string; body?: unknown } {
  const path = shape.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent((ids as unknown as Record<string, string>)[name] ?? ""),
  );
  const byId = { field: "id", op: "eq", value: ids.memberId };
  const bodies: Record<string, unknown> = {
    createWorkspace: { name: "Isolation probe" },
    createApiKey: { name: "isolation-probe" },
    createAudience: { name: `Probe ${hex()}` },
    mergeAudiences: { name: `Probe merge ${hex()}`, audienceIds: [ids.audienceId, ids.otherAudienceId] },
    snapshotAudience: { name: `Probe snapshot ${hex()}` },
    audienceOverlap: { audienceIds: [ids.audienceId, ids.otherAudienceId] },
    updateAudience: { name: `Probe rename ${hex()}` },
    addAudienceMembers: { memberIds: [ids.memberId] },
    removeAudienceMembers: { memberIds: [ids.memberId] },
    previewAudience: { filter: byId },
    setAudienceFilter: { filter: byId },
    previewAudienceFilterChange: { filter: byId },
    explainDraftMembership: { filter: byId },
    upsertMembers: { members: [{ id: ids.memberId, fields: { role: "probe" } }] },
    deleteMembers: { memberIds: [ids.memberId] },
    updateMember: { fields: { role: "probe" } },
    createWebhook: { url: "https://93.184.215.14/probe", enabled: false },
    updateWebhook: { description: "probe" },
    declareField: { type: "number" },
    recoverWebhook: { since: "2026-01-01T00:00:00.000Z" },
    ingestActivities: { activities: [{ memberId: ids.memberId, type: "probe.seen" }] },
  };
  const body = bodies[shape.operationId];
  if (shape.body?.required && body === undefined) {
    throw new Error(`no valid request for ${shape.operationId}: add its body to validRequest()`);
  }
  return { method: shape.method, path, ...(body === undefined ? {} : { body }) };
}

export { operationShapes };
