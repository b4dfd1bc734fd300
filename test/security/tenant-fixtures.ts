import { randomBytes } from "node:crypto";
import { addMembers, createAudience, createWorkspace, type TestWorkspace } from "../support/factories.ts";
import type { LiveServer } from "../support/live-server.ts";
import { type OperationShape, operationShapes } from "./contract-shapes.ts";

/** A workspace full of data that can be recognised anywhere: every value of it contains `hex`. */
export interface Tenant {
  ws: TestWorkspace;
  hex: string;
  keyId: string;
  audiences: { manual: string; rule: string; archived: string; spare: string; idem: string; sharedName: string };
  memberIds: string[];
  emails: string[];
  values: string[];
  names: string[];
  /** Values another workspace may legitimately use too (client-chosen ids, e-mails, names). */
  shared: { id: string; email: string; altEmail: string; audienceName: string; idemKey: string; idemName: string };
  cursors: { audienceStart: string; audienceEnd: string; workspace: string; byAudienceQuery: string };
}

const hex = () => randomBytes(4).toString("hex");

export async function populate(server: LiveServer, tag: string): Promise<Tenant> {
  const ws = await createWorkspace(server);
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
  const upsert = await ws.call("POST", "/members", { body: { members: [...members, sharedMember] } });
  if (upsert.status !== 200) throw new Error(`upsertMembers failed: ${upsert.status} ${upsert.text}`);
  const names = [`${Tag} Manual ${h}`, `${Tag} Rule ${h}`, `${Tag} Archived ${h}`, `${Tag} Spare ${h}`];
  const [manual, rule, archived, spare] = await Promise.all(names.map((name) => createAudience(ws, name)));
  const audiences = {
    manual: manual as string,
    rule: rule as string,
    archived: archived as string,
    spare: spare as string,
    sharedName: await createAudience(ws, shared.audienceName),
    idem: "",
  };
  await addMembers(ws, audiences.manual, { memberIds: [members[0]?.id, members[1]?.id, shared.id] });
  await addMembers(ws, audiences.archived, { memberIds: [members[2]?.id] });
  await ws.call("PUT", `/audiences/${audiences.rule}/filter`, {
    body: { filter: { field: "fields.company", op: "eq", value: `${Tag}Corp${h}` } },
  });
  await ws.call("DELETE", `/audiences/${audiences.archived}`);
  const idem = await ws.call("POST", "/audiences", {
    body: { name: shared.idemName },
    headers: { "idempotency-key": shared.idemKey },
  });
  audiences.idem = idem.body.id;
  const page = (await ws.call("GET", `/audiences/${audiences.manual}/members?limit=1`)).body.pageInfo;
  const all = (await ws.call("GET", "/members?limit=1")).body.pageInfo;
  const byQuery = (await ws.call("GET", `/members?limit=1&audienceId=${audiences.manual}`)).body.pageInfo;
  return {
    ws,
    hex: h,
    keyId: `key_${ws.key.split("_")[2]}`,
    audiences,
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
    },
  };
}

/** What must never reach another workspace's key: everything of the tenant except its shared values. */
export function secretsOf(t: Tenant): string[] {
  const ids = Object.values(t.audiences);
  const secret = t.ws.key.split("_")[3] ?? t.ws.key;
  return [t.hex, t.ws.id, t.keyId, t.ws.key, secret, ...ids, ...t.names, ...t.memberIds, ...t.emails, ...t.values];
}

/** Everything the tenant can observe of its own data through the API. */
export async function apiView(t: Tenant): Promise<unknown> {
  const get = async (path: string) => {
    const response = await t.ws.call("GET", path);
    return { status: response.status, body: response.body };
  };
  const audiences = (await get("/audiences?includeArchived=true")).body.results as Array<{ id: string }>;
  const members = (await get("/members?limit=500")).body.results as Array<{ id: string }>;
  const view: Record<string, unknown> = { audiences, members };
  for (const { id } of audiences) {
    view[`audience ${id}`] = [
      await get(`/audiences/${id}`),
      await get(`/audiences/${id}/filter`),
      await get(`/audiences/${id}/members?limit=500`),
    ];
  }
  for (const { id } of members) {
    const path = `/members/${encodeURIComponent(id)}`;
    view[`member ${id}`] = [await get(path), await get(`${path}/audiences`)];
  }
  return view;
}

export interface Ids {
  workspaceId: string;
  audienceId: string;
  otherAudienceId: string;
  memberId: string;
  keyId: string;
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
    updateAudience: { name: `Probe rename ${hex()}` },
    addAudienceMembers: { memberIds: [ids.memberId] },
    removeAudienceMembers: { memberIds: [ids.memberId] },
    previewAudience: { filter: byId },
    setAudienceFilter: { filter: byId },
    upsertMembers: { members: [{ id: ids.memberId, fields: { role: "probe" } }] },
    deleteMembers: { memberIds: [ids.memberId] },
    updateMember: { fields: { role: "probe" } },
  };
  const body = bodies[shape.operationId];
  if (shape.body?.required && body === undefined) {
    throw new Error(`no valid request for ${shape.operationId}: add its body to validRequest()`);
  }
  return { method: shape.method, path, ...(body === undefined ? {} : { body }) };
}

export { operationShapes };
