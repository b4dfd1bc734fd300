// The webhook receiver of docs/webhooks.md: verifies every delivery's signature, then handles its event once.
//   npm run build, then WEBHOOK_SECRET=whsec_… PORT=4000 node packages/client/examples/dist/receiver-example.js
import { createServer } from "node:http";
import { verifyWebhook, WebhookVerificationError } from "@audience-service/client";

const secret = process.env.WEBHOOK_SECRET ?? "";
// Deliveries are at least once and in any order: skip an event seen before, order by sequence.
const seen = new Set<string>();

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    try {
      // The body exactly as received: the signature covers its bytes.
      const event = verifyWebhook(Buffer.concat(chunks), request.headers, secret);
      if (!seen.has(event.id)) {
        seen.add(event.id);
        console.log(`${event.sequence} ${event.type} ${JSON.stringify(event.data)}`);
      }
      response.writeHead(204).end();
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      response.writeHead(400).end();
    }
  });
});
server.listen(Number(process.env.PORT ?? 4000), "127.0.0.1", () => console.log("receiving webhooks"));
