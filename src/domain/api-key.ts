/**
 * API keys read `ak_<workspace>_<key>_<secret>`: the workspace and key ids let a request find its
 * key by primary key (every table is keyed by workspace), and a client (the CLI) can tell which
 * workspace a key belongs to without asking the server. The CLI ships in the SDK package, without
 * the server, so it keeps a copy of this shape (packages/client/src/cli/config.ts; a test holds
 * the two in step).
 */
const KEY_PATTERN = /^ak_([0-9A-Za-z]{20})_([0-9A-Za-z]{20})_([0-9A-Za-z]{32})$/;

export interface ApiKeyParts {
  workspaceId: string;
  keyId: string;
  secret: string;
}

/** The parts of a workspace API key, or undefined when the text is not shaped like one. */
export function parseApiKey(token: string): ApiKeyParts | undefined {
  const match = KEY_PATTERN.exec(token);
  if (!match) return undefined;
  const [, workspacePart, keyPart, secret] = match as unknown as [string, string, string, string];
  return { workspaceId: `ws_${workspacePart}`, keyId: `key_${keyPart}`, secret };
}

export function formatApiKey({ workspaceId, keyId, secret }: ApiKeyParts): string {
  return `ak_${workspaceId.replace(/^ws_/, "")}_${keyId.replace(/^key_/, "")}_${secret}`;
}
