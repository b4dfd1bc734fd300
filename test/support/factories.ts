import { randomBytes } from "node:crypto";
import type { AudienceClient, operations } from "@audience-service/client";
import { checkedClient } from "./checked-client.ts";
import { ADMIN_TOKEN } from "./live-server.ts";

const unique = (prefix: string) => `${prefix} ${randomBytes(4).toString("hex")}`;

type JsonBody<C> = C extends { "application/json": infer B } ? B : never;
type Body<Op extends keyof operations> = JsonBody<NonNullable<operations[Op]["requestBody"]>["content"]>;
export type AddMembersBody = Body<"addAudienceMembers">;
export type MemberInput = Body<"upsertMembers">["members"][number];
export type ActivityInput = Body<"ingestActivities">["activities"][number];

/** A workspace with its own API key, and the typed SDK (checked against the contract) bound to that key. */
export interface TestWorkspace {
  id: string;
  name: string;
  key: string;
  keyId: string;
  api: AudienceClient;
}

export async function createWorkspace(server: { baseUrl: string }): Promise<TestWorkspace> {
  const admin = checkedClient(server.baseUrl, ADMIN_TOKEN);
  const workspace = await admin.POST("/v0/workspaces", { body: { name: unique("Workspace") } });
  const key = await admin.POST("/v0/workspaces/{workspaceId}/api-keys", {
    params: { path: { workspaceId: workspace.id } },
    body: { name: "tests" },
  });
  return {
    ...workspace,
    key: key.key,
    keyId: key.id,
    api: checkedClient(server.baseUrl, key.key),
  };
}

export async function createAudience(ws: TestWorkspace, name = unique("Audience")): Promise<string> {
  const created = await ws.api.POST("/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId: ws.id } },
    body: { name },
  });
  return created.id;
}

/**
 * `count` new audiences, created ten at a time: a test is one client among many on a shared
 * server, and a hundred requests at once can fill the PostgreSQL pool's queue, which answers 503.
 */
export async function createAudiences(ws: TestWorkspace, count: number): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < count) {
    const batch = Math.min(10, count - ids.length);
    ids.push(...(await Promise.all(Array.from({ length: batch }, () => createAudience(ws)))));
  }
  return ids;
}

export function addMembers(ws: TestWorkspace, audienceId: string, body: AddMembersBody) {
  return ws.api.POST("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
    params: { path: { workspaceId: ws.id, audienceId } },
    body,
  });
}

export function ingestActivities(ws: TestWorkspace, activities: ActivityInput[]) {
  return ws.api.POST("/v0/workspaces/{workspaceId}/activities", {
    params: { path: { workspaceId: ws.id } },
    body: { activities },
  });
}

export function upsertMembers(ws: TestWorkspace, members: MemberInput[]) {
  return ws.api.POST("/v0/workspaces/{workspaceId}/members", {
    params: { path: { workspaceId: ws.id } },
    body: { members },
  });
}

/** Every member id of the audience, walking all pages in the default order. */
export async function allMemberIds(ws: TestWorkspace, audienceId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const member of ws.api.members("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
    params: { path: { workspaceId: ws.id, audienceId }, query: { limit: 500 } },
  })) {
    ids.push(member.id);
  }
  return ids;
}

/**
 * An instant between two writes: the last write committed before it, and the next one, started
 * after the clock has passed it by a millisecond, is recorded after it (the membership record
 * keeps microseconds, the contract milliseconds).
 */
export async function instantBetweenWrites(): Promise<string> {
  const at = Date.now();
  while (Date.now() <= at + 1) await new Promise((resolve) => setImmediate(resolve));
  return new Date(at).toISOString();
}
