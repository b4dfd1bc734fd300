// The sync recipe of docs/events.md: keep a copy of an audience's members, exactly, with the event feed.
//   npm run build, then
//   API_URL=http://127.0.0.1:3000 WORKSPACE_ID=… API_KEY=… AUDIENCE_ID=… node packages/client/examples/dist/sync-example.js
import { createAudienceClient } from "@audience-service/client";

const api = createAudienceClient({
  baseUrl: process.env.API_URL ?? "http://127.0.0.1:3000",
  apiKey: process.env.API_KEY ?? "",
});
const workspaceId = process.env.WORKSPACE_ID ?? "";
const audienceId = process.env.AUDIENCE_ID ?? "";

// 1. Where the feed is now.
const { cursor } = await api.GET("/v0/workspaces/{workspaceId}/events/latest", {
  params: { path: { workspaceId } },
});

// 2. A copy of the audience as it is now (changes made meanwhile are in the feed after the cursor).
const copy = new Set<string>();
for await (const member of api.members("/v0/workspaces/{workspaceId}/audiences/{audienceId}/members", {
  params: { path: { workspaceId, audienceId }, query: { limit: 500 } },
})) {
  copy.add(member.id);
}
console.log(`copied ${copy.size} members`);

// 3. Every change after the cursor, as it happens. Applying entered and left is idempotent, so the
//    copy converges to the audience exactly. Store page.cursor to resume there after a restart.
for await (const page of api.feed({ workspaceId, after: cursor, audienceId, types: ["audience.members_changed"] })) {
  for (const event of page.events) {
    if (event.type !== "audience.members_changed") continue;
    for (const memberId of event.data.entered) copy.add(memberId);
    for (const memberId of event.data.left) copy.delete(memberId);
  }
  console.log(`${copy.size} members: ${[...copy].sort().join(" ")}`);
}
