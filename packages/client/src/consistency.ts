import type { Middleware } from "openapi-fetch";

const HEADER = "consistency-token";

/**
 * Read your own writes on a server that reads from PostgreSQL replicas: each write's answer
 * carries a Consistency-Token, and a read that sends it back sees that write. One per client:
 * the newest token this client received goes with each of its later requests, so what it wrote it
 * reads, whichever server process or replica answers. A server without replicas sends none.
 */
export interface Consistency {
  /** The newest Consistency-Token received; undefined until a write's answer carried one. */
  readonly token: string | undefined;
  /** Takes the token of an answer received outside the client (a streamed upload, say). */
  track(response: Response): void;
}

/**
 * The later of two tokens. This server's tokens are log positions written as 16 hex digits, so
 * the greater sorts last; answers to concurrent writes may arrive in any order, and the older
 * token must not replace the newer. A token of another form is taken as it comes.
 */
function later(kept: string | undefined, received: string): string {
  const positions = /^[0-9A-F]{16}$/;
  if (kept === undefined || !positions.test(kept) || !positions.test(received)) return received;
  return received > kept ? received : kept;
}

export function consistency(): Consistency & { middleware: Middleware } {
  let token: string | undefined;
  const track = (response: Response) => {
    const received = response.headers.get(HEADER);
    if (received !== null) token = later(token, received);
  };
  return {
    get token() {
      return token;
    },
    track,
    middleware: {
      onRequest({ request }) {
        // A token the caller set on the request itself wins.
        if (token !== undefined && !request.headers.has(HEADER)) request.headers.set(HEADER, token);
        return request;
      },
      onResponse({ response }) {
        track(response);
        return response;
      },
    },
  };
}
