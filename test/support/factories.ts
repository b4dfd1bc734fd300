import { randomBytes } from "node:crypto";
import type { AudienceClient, operations } from "../../src/client/index.ts";
import { checkedClient } from "./checked-client.ts";
import { ADMIN_TOKEN, call, type RequestOptions } from "./live-server.ts";

const unique = (prefix: string) => `${prefix} ${randomBytes(4).toString("hex")}`;

type Body<Op extends keyof operations> = NonNullable<operations[Op]["requestBody"]>["content"]["application/json"];
export type AddMembersBody = Body<"addAudienceMembers">;
export type MemberInput = Body<"upsertMembers">["members"][number];

/** A workspace with its own API key, and the typed SDK (checked against the contract) bound to that key. */
export interface TestWorkspace {
  id: string;
  name: string;
  key: string;
  keyId: string;
  api: AudienceClient;
  /**
   * @deprecated Untyped: use `api`. Calls a path under /v0/workspaces/<id> with this workspace's
   * key; kept only for test/property/membership-model.test.ts until it moves to the SDK.
   */
  call(method: string, path: string, options?: RequestOptions): Promise<LegacyResponse>;
}

/** What the deprecated TestWorkspace.call answers: the parsed body, whatever the status. */
export interface LegacyResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
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
    async call(method, path, options = {}) {
      const url = `/v0/workspaces/${workspace.id}${path}`;
      const response = await call(server, method, url, { token: key.key, ...options });
      return { ...response, body: response.text === "" ? undefined : JSON.parse(response.text) };
    },
  };
}

export async function createAudience(ws: TestWorkspace, name = unique("Audience")): Promise<string> {
  const created = await ws.api.POST("/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId: ws.id } },
    body: { name },
  });
  return created.id;
}

export function addMembers(ws: TestWorkspace, audienceId: string, body: AddMembersBody) {
  return ws.api.POST("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
    params: { path: { workspaceId: ws.id, audienceId } },
    body,
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
