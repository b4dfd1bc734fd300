import { describe, expect, it } from "vitest";
import { forgetSession, keyFromFragment, restoreSession, sessionOf } from "../../../console/src/session.ts";

const KEY = `ak_${"W".repeat(20)}_${"K".repeat(20)}_${"s".repeat(32)}`;

function memoryStorage() {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
  };
}

describe("the console's key handling", () => {
  it("reads the workspace from a key, and refuses text that is not one", () => {
    expect(sessionOf(`  ${KEY}\n`)).toEqual({ apiKey: KEY, workspaceId: `ws_${"W".repeat(20)}` });
    expect(sessionOf("ak_short")).toBeUndefined();
    expect(sessionOf(`${KEY}x`)).toBeUndefined();
  });

  it("signs in from the link's fragment, takes the key out of the address and keeps it for the tab", () => {
    const storage = memoryStorage();
    const replaced: string[] = [];
    const session = restoreSession({ hash: `#key=${KEY}`, pathname: "/console/", search: "?x=1" }, storage, (url) =>
      replaced.push(url),
    );
    expect(session?.apiKey).toBe(KEY);
    expect(replaced).toEqual(["/console/?x=1"]);
    expect([...storage.items.values()]).toEqual([KEY]);
    // The next load of the tab, without the fragment.
    expect(restoreSession({ hash: "", pathname: "/console/", search: "" }, storage, () => {})?.apiKey).toBe(KEY);
    forgetSession(storage);
    expect(restoreSession({ hash: "", pathname: "/console/", search: "" }, storage, () => {})).toBeUndefined();
  });

  it("keeps the rest of a fragment, and drops a key that is not one", () => {
    expect(keyFromFragment(`#key=${KEY}&tab=rule`)).toEqual({ key: KEY, rest: "#tab=rule" });
    const storage = memoryStorage();
    const replaced: string[] = [];
    expect(
      restoreSession({ hash: "#key=nope", pathname: "/console/", search: "" }, storage, (u) => replaced.push(u)),
    ).toBeUndefined();
    expect(replaced).toEqual(["/console/"]);
    expect(storage.items.size).toBe(0);
  });
});
