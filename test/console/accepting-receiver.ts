import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A webhook receiver on 127.0.0.1 that accepts every delivery (204), closed when the test ends:
 * for journeys that subscribe a webhook and watch its deliveries succeed.
 */
export async function startAcceptingReceiver(onTestFinished: (fn: () => Promise<void>) => void): Promise<string> {
  const receiver = createServer((request, response) => {
    request.resume();
    request.on("end", () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  onTestFinished(() => new Promise((resolve) => receiver.close(() => resolve())));
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
}
