// The SDK example of docs/sdk.md. Run it against `npm start` or `npm run mock`:
//   npm run build, then
//   API_URL=http://127.0.0.1:3000 WORKSPACE_ID=… API_KEY=… node packages/client/examples/dist/example.js
import { ApiError, createAudienceClient } from "@audience-service/client";

const api = createAudienceClient({
  baseUrl: process.env.API_URL ?? "http://127.0.0.1:3000",
  apiKey: process.env.API_KEY ?? "",
});
const workspaceId = process.env.WORKSPACE_ID ?? "";

// Create an audience; if one already has the name (a second run), use that one.
const name = "Weekly digest readers";
let audienceId: string;
try {
  const created = await api.POST("/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId } },
    body: { name },
  });
  audienceId = created.id;
} catch (error) {
  if (!(error instanceof ApiError && error.code === "audience_name_taken")) throw error;
  const { results } = await api.GET("/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId }, query: { search: name } },
  });
  const existing = results.find((audience) => audience.name.toLowerCase() === name.toLowerCase());
  if (!existing) throw error;
  audienceId = existing.id;
}
console.log(`audience ${audienceId}`);

// Add members by id and with their data.
const result = await api.POST("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
  params: { path: { workspaceId, audienceId } },
  body: {
    memberIds: ["mem_1001", "mem_1002"],
    members: [{ id: "mem_1003", email: "ada@example.com", fields: { firstName: "Ada", lastName: "Lovelace" } }],
  },
});
console.log(`added ${result.added}, already members ${result.alreadyMembers}`);

// Walk every member, two per page: the iterator follows pageInfo.endCursor.
for await (const member of api.members("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
  params: { path: { workspaceId, audienceId }, query: { limit: 2 } },
})) {
  console.log(`member ${member.id} ${member.email ?? "(no e-mail)"} ${member.fields.firstName}`.trimEnd());
}
