import type { components, paths } from "@audience-service/client";
import { parse } from "csv-parse/sync";
import type { TestWorkspace } from "./factories.ts";
import { type ContractUrl, call } from "./live-server.ts";

type Member = components["schemas"]["Member"];

/**
 * Member exports as a client downloads them: a GET with an Accept header and the workspace's key,
 * its answer checked against the contract (an NDJSON file line by line) before the test sees it.
 */
export const download = <P extends keyof paths>(
  server: { baseUrl: string },
  ws: TestWorkspace,
  url: ContractUrl<P>,
  accept: string,
) => call(server, "GET", url, { token: ws.key, headers: { accept } });

/** A CSV file read back by csv-parse (the parser imports use), one object per row by header. */
export const csvRows = (text: string) => parse(text, { columns: true }) as Record<string, string>[];

/** An NDJSON file's members. */
export const ndjsonMembers = (text: string) =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Member);

/** The CSV row a member of the JSON API should be, with these custom field columns. */
export const csvRowOf = (member: Member, keys: string[]) => ({
  id: member.id,
  email: member.email ?? "",
  alternativeEmails: member.alternativeEmails.join(";"),
  ...Object.fromEntries(["firstName", "lastName", "role", "company", ...keys].map((k) => [k, member.fields[k] ?? ""])),
});

/** Every member of the workspace (or of the audience) from the JSON API, oldest first. */
export async function jsonMembers(ws: TestWorkspace, audienceId?: string): Promise<Member[]> {
  const members: Member[] = [];
  for await (const member of ws.api.members("/v0/workspaces/{workspaceId}/members", {
    params: { path: { workspaceId: ws.id }, query: { limit: 500, sortDirection: "ASC", audienceId } },
  })) {
    members.push(member);
  }
  return members;
}
