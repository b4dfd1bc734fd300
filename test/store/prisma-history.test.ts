// Prisma keeps the arguments of its last 100 debug calls (whole queries with their parameters) for
// crash reports, in the client and again in the driver adapter, whether or not DEBUG is set: after
// bulk writes, tens of megabytes of member data held after the requests that carried them. The
// patches in patches/ (applied by patch-package at install) make that history empty. This test
// looks for a bulk write's parameter in a snapshot of the whole heap after the query is done: no
// copy may be left anywhere, committed or not, on either store.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { getHeapSnapshot } from "node:v8";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/platform/db/database.ts";
import { openTestStore } from "../support/live-server.ts";

let store: Store;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(() => close());

/**
 * Which markers some live string of the heap contains. The snapshot is taken (garbage collected
 * first) before the markers are spelled out as strings, so the search itself is not in it.
 */
async function liveMarkers(markers: Buffer[]): Promise<string[]> {
  // Let the current turn of the event loop end first: a query that just failed is still referenced
  // from the callbacks of that turn (not kept by anything) until it does.
  await new Promise((resolve) => setImmediate(resolve));
  const snapshot = getHeapSnapshot();
  const needles = markers.map(text);
  const found = new Set<string>();
  const overlap = Math.max(...needles.map((needle) => needle.length));
  let tail = "";
  for await (const chunk of snapshot) {
    const part = tail + String(chunk);
    for (const needle of needles) if (part.includes(needle)) found.add(needle);
    tail = part.slice(-overlap);
  }
  return needles.filter((needle) => found.has(needle));
}

/** A marker is kept as bytes; its text exists only inside the parameter that carries it. */
const marker = () => randomBytes(12);
const text = (m: Buffer) => `marker-${m.toString("hex")}`;
/** A 200 kB parameter starting with the marker. */
const bulk = (m: Buffer) => `${text(m)}${"x".repeat(200_000)}`;

describe("Prisma's debug history", () => {
  it("keeps no query parameters once a read, a transaction or a failed transaction is done", async () => {
    const markers = { held: marker(), read: marker(), committed: marker(), failed: marker() };
    // The control: a flat string the test still holds must be found, or the search proves nothing.
    const kept = Buffer.from(text(markers.held)).toString();

    await store.db.$queryRaw`SELECT length(${bulk(markers.read)}::text)`;
    await store.transaction((tx) => tx.$queryRaw`SELECT length(${bulk(markers.committed)}::text)`);
    // The error is dropped at once, as the service's error handler drops it once it has answered.
    const outcome = await store
      .transaction((tx) => tx.$queryRaw`SELECT length(${bulk(markers.failed)}::text) / 0`)
      .then(
        () => "committed",
        () => "failed",
      );
    expect(outcome).toBe("failed");

    const found = await liveMarkers(Object.values(markers));
    expect(Object.entries(markers).flatMap(([name, m]) => (found.includes(text(m)) ? [name] : []))).toEqual(["held"]);
    expect(kept).toContain("marker-");
  });

  it("is patched in every build the service can load (tests load the CommonJS one, npm start the ES module)", () => {
    const require = createRequire(import.meta.url);
    const builds = [
      require.resolve("@prisma/debug"),
      require.resolve("@prisma/debug").replace(/\.js$/, ".mjs"),
      require.resolve("@prisma/client/runtime/client"),
      require.resolve("@prisma/client/runtime/client").replace(/\.js$/, ".mjs"),
    ];
    const historyLength = (file: string) =>
      /MAX_ARGS_HISTORY = (\d+);/.exec(readFileSync(file, "utf8"))?.[1] ??
      /var \w+=(\d+),\w+=\["green","yellow"/.exec(readFileSync(file, "utf8"))?.[1];
    expect(builds.map(historyLength)).toEqual(["0", "0", "0", "0"]);
  });
});
