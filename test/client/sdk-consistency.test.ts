import { createAudienceClient } from "@audience-service/client";
import { describe, expect, it } from "vitest";

// Read-your-writes on a server that reads from replicas: the SDK sends back the newest
// Consistency-Token it received, per client. The server side is test/faults/replicas.test.ts;
// here a fetch that answers as such a server would, and records what each request carried.
function fakeServer(tokens: (string | undefined)[]) {
  const sent: (string | null)[] = [];
  const fetch = async (request: Request) => {
    sent.push(request.headers.get("consistency-token"));
    const token = tokens.shift();
    return new Response(JSON.stringify({ results: [] }), {
      headers: { "content-type": "application/json", ...(token ? { "consistency-token": token } : {}) },
    });
  };
  return { sent, fetch };
}

const workspace = { params: { path: { workspaceId: "ws_1" } } };

describe("the SDK's Consistency-Token", () => {
  it("goes with every request after the answer that carried it, until a newer one", async () => {
    const server = fakeServer([undefined, "00000000030160A0", undefined, "00000000030170B8"]);
    const api = createAudienceClient({ baseUrl: "http://api.test", apiKey: "ak_test", fetch: server.fetch });
    await api.GET("/v0/workspaces/{workspaceId}/audiences", workspace);
    await api.POST("/v0/workspaces/{workspaceId}/audiences", { ...workspace, body: { name: "Readers" } });
    await api.GET("/v0/workspaces/{workspaceId}/audiences", workspace);
    await api.POST("/v0/workspaces/{workspaceId}/audiences", { ...workspace, body: { name: "Writers" } });
    await api.GET("/v0/workspaces/{workspaceId}/audiences", workspace);
    expect(server.sent).toEqual([null, null, "00000000030160A0", "00000000030160A0", "00000000030170B8"]);
    expect(api.consistency.token).toBe("00000000030170B8");
  });

  it("keeps the newest token when the answers of concurrent writes arrive out of order", async () => {
    const server = fakeServer([]);
    const api = createAudienceClient({ baseUrl: "http://api.test", apiKey: "ak_test", fetch: server.fetch });
    // Write B committed after write A, but its answer arrived first.
    api.consistency.track(new Response(null, { headers: { "consistency-token": "00000000030170B8" } }));
    api.consistency.track(new Response(null, { headers: { "consistency-token": "00000000030160A0" } }));
    await api.GET("/v0/workspaces/{workspaceId}/audiences", workspace);
    expect(server.sent).toEqual(["00000000030170B8"]);
  });

  it("is each client's own", async () => {
    const server = fakeServer(["00000000030160A0"]);
    const writer = createAudienceClient({ baseUrl: "http://api.test", apiKey: "ak_test", fetch: server.fetch });
    const other = createAudienceClient({ baseUrl: "http://api.test", apiKey: "ak_test", fetch: server.fetch });
    await writer.POST("/v0/workspaces/{workspaceId}/audiences", { ...workspace, body: { name: "Readers" } });
    await other.GET("/v0/workspaces/{workspaceId}/audiences", workspace);
    await writer.GET("/v0/workspaces/{workspaceId}/audiences", workspace);
    expect(server.sent).toEqual([null, null, "00000000030160A0"]);
  });

  it("leaves a token the caller sets on a request alone, and takes one from an answer received elsewhere", async () => {
    const server = fakeServer([]);
    const api = createAudienceClient({ baseUrl: "http://api.test", apiKey: "ak_test", fetch: server.fetch });
    api.consistency.track(new Response(null, { headers: { "consistency-token": "00000000030160A0" } }));
    await api.GET("/v0/workspaces/{workspaceId}/audiences", {
      params: { ...workspace.params, header: { "Consistency-Token": "0000000003000000" } },
    });
    await api.GET("/v0/workspaces/{workspaceId}/audiences", workspace);
    expect(server.sent).toEqual(["0000000003000000", "00000000030160A0"]);
  });
});
