// docs/events.md's table of events names every event type of the contract, and the reasons of
// audience.members_changed that the contract declares: a new type or reason is documented, or this fails.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readContract } from "../../src/contract/contract.ts";

const DOC = readFileSync(new URL("../../docs/events.md", import.meta.url), "utf8");

interface Schema {
  enum?: string[];
  properties?: Record<string, Schema>;
}
const schemas = (readContract() as unknown as { components: { schemas: Record<string, Schema> } }).components.schemas;
const EVENT_TYPES = schemas.EventType?.enum ?? [];
const REASONS = schemas.AudienceMembersChangedEvent?.properties?.data?.properties?.reason?.enum ?? [];

/** The rows of the table under "| Event | Data | Written by |": each one's first and last cells. */
function tableRows(): { events: string[]; writtenBy: string }[] {
  const table = DOC.slice(DOC.indexOf("| Event | Data | Written by |")).split("\n").slice(2);
  const rows: { events: string[]; writtenBy: string }[] = [];
  for (const row of table) {
    if (!row.startsWith("|")) break;
    const cells = row.split("|").slice(1, -1);
    rows.push({
      events: [...(cells[0] ?? "").matchAll(/`([\w.]+)`/g)].map((m) => m[1] as string),
      writtenBy: cells.at(-1) ?? "",
    });
  }
  return rows;
}

describe("docs/events.md's table of events", () => {
  it("names every event type of the contract, and only those", () => {
    const documented = tableRows().flatMap((row) => row.events);
    expect(EVENT_TYPES.length).toBeGreaterThan(5);
    expect([...documented].sort()).toEqual([...EVENT_TYPES].sort());
  });

  it("gives every reason of audience.members_changed", () => {
    const row = tableRows().find((r) => r.events.includes("audience.members_changed"));
    const named = new Set([...(row?.writtenBy ?? "").matchAll(/`(\w+)`/g)].map((m) => m[1] as string));
    expect(REASONS.length).toBeGreaterThan(5);
    expect(REASONS.filter((reason) => !named.has(reason))).toEqual([]);
  });
});
