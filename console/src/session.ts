/**
 * Signing in: an API key, kept in the tab's sessionStorage (gone when the tab closes) and handed
 * to new tabs of the same browser session that ask (shareSession, never written to disk), read
 * from what a person pastes or from the first start's link (/console#key=…). The workspace is the
 * one the key belongs to: a key reads `ak_<workspace>_<key>_<secret>`.
 */
export interface Session {
  apiKey: string;
  workspaceId: string;
}

const KEY_PATTERN = /^ak_([0-9A-Za-z]{20})_[0-9A-Za-z]{20}_[0-9A-Za-z]{32}$/;
const STORAGE_KEY = "audience-service.apiKey";

/** The session of a key, or undefined when the text is not an API key (surrounding spaces ignored). */
export function sessionOf(text: string): Session | undefined {
  const apiKey = text.trim();
  const match = KEY_PATTERN.exec(apiKey);
  return match ? { apiKey, workspaceId: `ws_${match[1]}` } : undefined;
}

/** The key a link carries in its fragment (#key=…), and the fragment to leave in its place. */
export function keyFromFragment(hash: string): { key: string | undefined; rest: string } {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const key = params.get("key") ?? undefined;
  params.delete("key");
  const rest = params.toString();
  return { key, rest: rest === "" ? "" : `#${rest}` };
}

export interface KeyStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * The session at page load: a key in the address's fragment wins (and the fragment is taken out
 * of the address bar and the history, so the key is not left on screen or bookmarked), else the
 * key this tab signed in with.
 */
export function restoreSession(
  location: { hash: string; pathname: string; search: string },
  storage: KeyStore,
  replaceUrl: (url: string) => void,
): Session | undefined {
  const { key, rest } = keyFromFragment(location.hash);
  if (key !== undefined) {
    replaceUrl(`${location.pathname}${location.search}${rest}`);
    const session = sessionOf(key);
    if (session) storage.setItem(STORAGE_KEY, session.apiKey);
    return session;
  }
  const kept = storage.getItem(STORAGE_KEY);
  return kept === null ? undefined : sessionOf(kept);
}

export function keepSession(session: Session, storage: KeyStore): void {
  storage.setItem(STORAGE_KEY, session.apiKey);
}

export function forgetSession(storage: KeyStore): void {
  storage.removeItem(STORAGE_KEY);
}

type SessionMessage = { type: "ask" } | { type: "key"; apiKey: string } | { type: "signed-out" };

export interface SessionSharing {
  /** Tells the other tabs this browser session signed out: they sign out too. */
  signedOut(): void;
  close(): void;
}

/**
 * A sign-in carried to the other tabs of the same browser session, in memory only: a tab opened
 * without a key asks on a BroadcastChannel (same origin only), and a signed-in tab answers with
 * its key, which the new tab keeps in its own sessionStorage. Nothing is written to disk; a new
 * browser session (or another profile) asks in vain and shows the sign-in form.
 */
export function shareSession(
  current: () => Session | undefined,
  onSession: (session: Session) => void,
  onSignedOut: () => void,
): SessionSharing {
  if (typeof BroadcastChannel === "undefined") return { signedOut() {}, close() {} };
  const channel = new BroadcastChannel("audience-service.session");
  const post = (message: SessionMessage) => channel.postMessage(message);
  channel.onmessage = (event: MessageEvent<SessionMessage>) => {
    const message = event.data;
    const mine = current();
    if (message.type === "ask" && mine) post({ type: "key", apiKey: mine.apiKey });
    if (message.type === "key" && !mine) {
      const session = sessionOf(message.apiKey);
      if (session) onSession(session);
    }
    if (message.type === "signed-out" && mine) onSignedOut();
  };
  if (!current()) post({ type: "ask" });
  return { signedOut: () => post({ type: "signed-out" }), close: () => channel.close() };
}
