import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { AudienceClient, components } from "@audience-service/client";
import { expect } from "vitest";

type Event = components["schemas"]["Event"];
const FEED = "/v0/workspaces/{workspaceId}/events";

/** Every event of the workspace's feed, from the start or after a cursor. */
export async function readFeed(api: AudienceClient, workspaceId: string, after?: string): Promise<Event[]> {
  const events: Event[] = [];
  let cursor = after;
  for (;;) {
    const page = await api.GET(FEED, {
      params: { path: { workspaceId }, query: { limit: 1000, ...(cursor ? { after: cursor } : {}) } },
    });
    events.push(...page.results);
    cursor = page.pageInfo.endCursor;
    if (!page.pageInfo.hasNextPage) return events;
  }
}

/**
 * The feed once every event of the writes made so far is published: events are published just
 * after their write commits, so a test waits for the count it expects, not for a time.
 */
export async function settledFeed(api: AudienceClient, workspaceId: string, count: number): Promise<Event[]> {
  let events: Event[] = [];
  await expect
    .poll(
      async () => {
        events = await readFeed(api, workspaceId);
        return events.length;
      },
      { timeout: 20_000, interval: 25 },
    )
    .toBeGreaterThanOrEqual(count);
  return events;
}

/** The audience.members_changed events among these, readably: ids sorted, nothing else. */
export function membershipChanges(events: Event[]) {
  return events.flatMap((event) =>
    event.type === "audience.members_changed"
      ? [
          {
            audienceId: event.data.audienceId,
            reason: event.data.reason,
            entered: [...event.data.entered].sort(),
            left: [...event.data.left].sort(),
          },
        ]
      : [],
  );
}

/** The type and data of events, as assertions compare them. */
export const shapes = (events: Event[]) => events.map((event) => ({ type: event.type, data: event.data }));

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

/**
 * A webhook receiver on 127.0.0.1 that records every request and answers what `answer` says
 * (200 by default).
 */
export async function startReceiver(
  answer: (request: ReceivedRequest, index: number) => number | Promise<number> = () => 200,
) {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", async () => {
      const request = { headers: req.headers, body, path: req.url ?? "" };
      received.push(request);
      res.statusCode = await answer(request, received.length - 1);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** The parsed bodies of the requests received. */
    bodies: () =>
      received.map((r) => JSON.parse(r.body) as { id: string; type: string; sequence: number; data: unknown }),
    async waitFor(count: number): Promise<void> {
      await expect.poll(() => received.length, { timeout: 20_000, interval: 25 }).toBeGreaterThanOrEqual(count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Verifies a Standard Webhooks signature with node:crypto alone, independently of the library
 * the service signs with: HMAC-SHA256 keyed with the secret's bytes over "id.timestamp.body",
 * compared with each "v1,<base64>" in the header.
 */
export function verifiedIndependently(request: ReceivedRequest, secret: string): boolean {
  const id = String(request.headers["webhook-id"]);
  const timestamp = String(request.headers["webhook-timestamp"]);
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${request.body}`).digest();
  return String(request.headers["webhook-signature"])
    .split(" ")
    .some((part) => {
      const [version, signature] = part.split(",");
      const given = Buffer.from(signature ?? "", "base64");
      return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
    });
}
