import { Webhook, WebhookVerificationError } from "standardwebhooks";
import type { WebhookEvent } from "./events.js";

export { WebhookVerificationError };

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/** A header's value from a fetch Headers or a Node headers object (names in any case). */
function header(headers: HeaderSource, name: string): string {
  if (headers instanceof Headers) return headers.get(name) ?? "";
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  const value = entry?.[1];
  return Array.isArray(value) ? (value[0] ?? "") : (value ?? "");
}

/**
 * Checks a webhook delivery the way Standard Webhooks specifies (the signature over
 * `webhook-id.webhook-timestamp.body` with the secret, a timestamp within 5 minutes of now) and
 * returns the event it carries. Pass the body exactly as received (before any JSON parsing), and
 * during a secret rotation both secrets. Throws WebhookVerificationError when it does not verify.
 */
export function verifyWebhook(body: string | Buffer, headers: HeaderSource, secret: string | string[]): WebhookEvent {
  const signed = {
    "webhook-id": header(headers, "webhook-id"),
    "webhook-timestamp": header(headers, "webhook-timestamp"),
    "webhook-signature": header(headers, "webhook-signature"),
  };
  let failure: unknown;
  for (const key of Array.isArray(secret) ? secret : [secret]) {
    try {
      return new Webhook(key).verify(body, signed) as WebhookEvent;
    } catch (error) {
      failure = error;
    }
  }
  throw failure instanceof WebhookVerificationError
    ? failure
    : new WebhookVerificationError("No matching signature found");
}
