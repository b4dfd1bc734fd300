import { randomBytes } from "node:crypto";
import { ADMIN_TOKEN, call, type LiveServer, type RequestOptions } from "./live-server.ts";

const unique = (prefix: string) => `${prefix} ${randomBytes(4).toString("hex")}`;

/** A workspace with its own API key, and a caller bound to both. */
export interface TestWorkspace {
  id: string;
  key: string;
  /** Calls a path under /v0/workspaces/<id> with this workspace's key. */
  call<T = any>(method: string, path: string, options?: RequestOptions): ReturnType<typeof call<T>>;
}

export async function createWorkspace(server: LiveServer): Promise<TestWorkspace> {
  const workspace = await call(server, "POST", "/v0/workspaces", {
    token: ADMIN_TOKEN,
    body: { name: unique("Workspace") },
  });
  const key = await call(server, "POST", `/v0/workspaces/${workspace.body.id}/api-keys`, {
    token: ADMIN_TOKEN,
    body: { name: "tests" },
  });
  const id: string = workspace.body.id;
  return {
    id,
    key: key.body.key,
    call: (method, path, options = {}) =>
      call(server, method, `/v0/workspaces/${id}${path}`, { token: key.body.key, ...options }),
  };
}

export async function createAudience(workspace: TestWorkspace, name = unique("Audience")): Promise<string> {
  const response = await workspace.call("POST", "/audiences", { body: { name } });
  if (response.status !== 201) throw new Error(`createAudience failed: ${response.status} ${response.text}`);
  return response.body.id;
}

export async function addMembers(workspace: TestWorkspace, audienceId: string, body: object) {
  const response = await workspace.call("POST", `/audiences/${audienceId}/members`, { body });
  if (response.status !== 200) throw new Error(`addAudienceMembers failed: ${response.status} ${response.text}`);
  return response.body as { added: number; alreadyMembers: number; created: number; merged: number };
}

/** Every member id of the audience, walking all pages in the default order. */
export async function allMemberIds(workspace: TestWorkspace, audienceId: string): Promise<string[]> {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const query = new URLSearchParams({ limit: "500", ...(after ? { after } : {}) });
    const page = await workspace.call("GET", `/audiences/${audienceId}/members?${query}`);
    if (page.status !== 200) throw new Error(`listAudienceMembers failed: ${page.status} ${page.text}`);
    ids.push(...page.body.results.map((m: { id: string }) => m.id));
    if (!page.body.pageInfo.hasNextPage) return ids;
    after = page.body.pageInfo.endCursor;
  }
}
