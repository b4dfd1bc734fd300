import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { Resolve } from "../../config/settings.ts";
import { BadRequestError } from "../../domain/errors.ts";
import { isPublicAddress } from "./webhook-rules.ts";

/** Resolves a host name to every address it has (DNS, /etc/hosts). */
export type { Resolve };

export const resolveAll: Resolve = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** A URL's host as an address or name ([::1] → ::1). */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

const notAllowed = (detail: string) =>
  new BadRequestError("webhook_url_not_allowed", detail, [{ pointer: "/body/url", message: detail }]);

/**
 * The contract's `uri` format is RFC 3986's syntax, looser than the WHATWG URL parser that
 * delivery uses: a port over 65535, an IPv4 address out of range, an empty host or a forbidden
 * character in the host pass it, and are refused here.
 */
function parsed(raw: string): URL {
  if (URL.canParse(raw)) return new URL(raw);
  const message = "is not a valid URL: its host or port cannot be used";
  throw new BadRequestError("invalid_request", `/body/url ${message}.`, [{ pointer: "/body/url", message }]);
}

/**
 * Refuses a webhook URL that is not valid (400 invalid_request), that carries credentials, or
 * that does not resolve to public addresses only (400 webhook_url_not_allowed). With allowPrivate
 * (self-hosted internal receivers), any address passes. Delivery checks the addresses again, at
 * every connection (DNS can change).
 */
export async function checkWebhookUrl(
  raw: string,
  options: { allowPrivate: boolean; resolve: Resolve },
): Promise<void> {
  const url = parsed(raw);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw notAllowed("The URL must be http or https.");
  // A webhook's URL is shown by every read of it, where a password must never be; receivers
  // authenticate deliveries by their signature instead.
  if (url.username !== "" || url.password !== "") {
    throw notAllowed("The URL must not carry credentials (user:password@); verify deliveries by their signature.");
  }
  if (options.allowPrivate) return;
  const host = hostOf(url);
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await options.resolve(host);
  } catch {
    throw notAllowed(`${host} does not resolve to an address.`);
  }
  const refused = addresses.find((address) => !isPublicAddress(address));
  if (refused !== undefined || addresses.length === 0) {
    throw notAllowed(
      `${host} resolves to ${refused ?? "no address"}, which is not a public address. A receiver on your own network needs the server started with WEBHOOK_ALLOW_PRIVATE=true.`,
    );
  }
}

/** The answer to one delivery attempt: its HTTP status, or why there was none. */
export type Attempt = { statusCode: number } | { error: string };

export interface SenderOptions {
  allowPrivate: boolean;
  /** How long a receiver has to answer. */
  timeoutMs: number;
  /** How host names are resolved when connecting. */
  resolve: Resolve;
}

/**
 * POSTs deliveries over keep-alive connections. Every connection is made to addresses checked as
 * public (the lookup refuses a name that resolves to any other; an address in the URL is checked
 * before the request), redirects are not followed (a 3xx is a failed attempt), and an answer
 * must arrive within timeoutMs.
 */
export function createWebhookSender({ allowPrivate, timeoutMs, resolve }: SenderOptions) {
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const refused = allowPrivate ? undefined : addresses.find((address) => !isPublicAddress(address));
        const [first] = addresses;
        if (refused !== undefined || first === undefined) {
          const denied = Object.assign(
            new Error(`${hostname} resolves to ${refused ?? "no address"}, which is not a public address`),
            { code: "EADDRNOTALLOWED" },
          );
          return callback(denied, "", 0);
        }
        const entries = addresses.map((address) => ({ address, family: isIP(address) }));
        if (options.all) return (callback as unknown as (e: null, all: dns.LookupAddress[]) => void)(null, entries);
        callback(null, first, isIP(first));
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
  const agents = {
    "http:": new http.Agent({ keepAlive: true, maxSockets: 32 }),
    "https:": new https.Agent({ keepAlive: true, maxSockets: 32 }),
  };

  return {
    send(rawUrl: string, body: string, headers: Record<string, string>): Promise<Attempt> {
      const url = new URL(rawUrl);
      const host = hostOf(url);
      if (!allowPrivate && isIP(host) && !isPublicAddress(host)) {
        return Promise.resolve({ error: `${host} is not a public address` });
      }
      const client = url.protocol === "https:" ? https : http;
      return new Promise<Attempt>((resolve) => {
        const request = client.request(url, {
          method: "POST",
          agent: agents[url.protocol as "http:" | "https:"],
          lookup,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers },
        });
        const deadline = setTimeout(
          () => request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)),
          timeoutMs,
        );
        request.on("response", (response) => {
          resolve({ statusCode: response.statusCode ?? 0 });
          // Read and drop the body (the connection is then reused), within the same deadline.
          response.resume();
          response.on("end", () => clearTimeout(deadline));
        });
        request.on("error", (error) => {
          clearTimeout(deadline);
          resolve({ error: error.message });
        });
        request.end(body);
      });
    },
    close(): void {
      for (const agent of Object.values(agents)) agent.destroy();
    },
  };
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;
