// A store written before membership became bitsets (one row per include, exclude and membership)
// is upgraded by the service's migrations and its first start: every listing, reason and rule
// then behaves as if the data had been written by this version.
import { afterEach, describe, expect, it } from "vitest";
import { createServices } from "../../src/composition.ts";
import type { Store } from "../../src/platform/db/database.ts";
import { type OldStore, oldStore } from "../support/old-store.ts";

const BITSETS = "20261123000000_membership_bitsets";
const WS = "ws_upgrade";

/** The data, as the previous version stored it. */
const OLD_DATA = `
  INSERT INTO workspaces (workspace_id, name) VALUES ('${WS}', 'Upgrade');
  INSERT INTO members (workspace_id, id, email, fields, folded, created_at)
  SELECT '${WS}', id, id || '@example.com', jsonb_build_object('company', company),
         jsonb_build_object('id', id, 'email', id || '@example.com', 'emails', jsonb_build_array(id || '@example.com'),
                            'fields', jsonb_build_object('company', lower(company))),
         at::timestamptz
  FROM (VALUES ('m1', 'Acme', '2026-01-01T00:00:00Z'), ('m2', 'Acme', '2026-01-02T00:00:00Z'),
               ('m3', 'Beta', '2026-01-02T00:00:00Z'), ('m4', 'Acme', '2026-01-02T00:00:00Z'),
               ('m5', 'Beta', '2026-01-03T00:00:00Z'), ('m0', 'Acme', '2026-01-04T00:00:00Z')) AS v(id, company, at);
  INSERT INTO member_emails (workspace_id, email_key, member_id) SELECT workspace_id, email, id FROM members;
  -- Manual: m1 and m3 added by hand, m5 removed by hand.
  INSERT INTO audiences (workspace_id, id, name, name_key, member_count) VALUES ('${WS}', 'aud_manual', 'Manual', 'manual', 2);
  -- Acme by rule: m3 added by hand although it does not match, m2 removed by hand although it does.
  INSERT INTO audiences (workspace_id, id, name, name_key, member_count, filter)
  VALUES ('${WS}', 'aud_rule', 'Acme', 'acme', 4, '{"field":"fields.company","op":"eq","value":"ACME"}');
  INSERT INTO audience_entries (workspace_id, audience_id, member_id, kind) VALUES
    ('${WS}', 'aud_manual', 'm1', 'include'), ('${WS}', 'aud_manual', 'm3', 'include'),
    ('${WS}', 'aud_manual', 'm5', 'exclude'), ('${WS}', 'aud_rule', 'm3', 'include'),
    ('${WS}', 'aud_rule', 'm2', 'exclude');
  INSERT INTO audience_members (workspace_id, audience_id, member_id, member_created_at)
  SELECT m.workspace_id, v.audience_id, m.id, m.created_at FROM members AS m
  JOIN (VALUES ('aud_manual', 'm1'), ('aud_manual', 'm3'), ('aud_rule', 'm1'), ('aud_rule', 'm3'),
               ('aud_rule', 'm4'), ('aud_rule', 'm0')) AS v(audience_id, member_id) ON v.member_id = m.id;
`;

const kinds: ("embedded" | "postgres")[] = ["embedded"];
if (process.env.TEST_DATABASE_URL) kinds.push("postgres");

describe.each(kinds)("upgrading stored memberships to bitsets (%s)", { timeout: 60_000 }, (kind) => {
  let store: Store | undefined;
  let old: OldStore | undefined;
  afterEach(async () => {
    await store?.close();
    await old?.cleanUp();
  });

  it("keeps every membership, order and reason, and computes the rule's matches at start", async () => {
    old = await oldStore(kind, { before: BITSETS, data: OLD_DATA, name: "upgrade_test" });
    store = await old.open();
    const { membership, audiences, audienceMembers, members } = createServices(store);
    expect(await membership.refreshOutdatedRules()).toBe(1);
    expect(await membership.refreshOutdatedRules()).toBe(0);

    const ids = async (audienceId: string, sortDirection: "ASC" | "DESC" = "DESC") =>
      (await audienceMembers.list(WS, audienceId, { sortDirection })).results.map((m) => m.id);

    // Newest first, equal creation times by id.
    expect(await ids("aud_rule")).toEqual(["m0", "m4", "m3", "m1"]);
    expect(await ids("aud_rule", "ASC")).toEqual(["m1", "m3", "m4", "m0"]);
    expect(await ids("aud_manual")).toEqual(["m3", "m1"]);
    expect((await audiences.getFilter(WS, "aud_rule")).memberCount).toBe(4);
    expect((await members.audiences(WS, "m3")).results).toEqual([
      { id: "aud_rule", name: "Acme", isArchived: false, reason: "manual" },
      { id: "aud_manual", name: "Manual", isArchived: false, reason: "manual" },
    ]);
    expect((await members.audiences(WS, "m4")).results).toEqual([
      { id: "aud_rule", name: "Acme", isArchived: false, reason: "rule" },
    ]);

    // The membership record began at the upgrade, with a baseline row per member: the members
    // as of now are the members, each with the reason it is in, and the baseline is no change.
    const { record } = createServices(store);
    const now = new Date().toISOString();
    const asOf = async (audienceId: string) =>
      (await audienceMembers.list(WS, audienceId, { asOf: now })).results.map((m) => m.id);
    expect(await asOf("aud_rule")).toEqual(["m0", "m4", "m3", "m1"]);
    expect(await asOf("aud_manual")).toEqual(["m3", "m1"]);
    expect((await members.audiences(WS, "m4", now)).results.map((a) => [a.id, a.reason])).toEqual([
      ["aud_rule", "rule"],
    ]);
    expect((await members.audiences(WS, "m3", now)).results.map((a) => [a.id, a.reason])).toEqual([
      ["aud_rule", "manual"],
      ["aud_manual", "manual"],
    ]);
    const changes = await record.changes(WS, "aud_rule", {});
    expect([changes.results, changes.counts]).toEqual([[], { entered: 0, left: 0 }]);

    // Members created now come after the old ones.
    await audienceMembers.add(WS, "aud_manual", { memberIds: ["a-new"] });
    expect(await ids("aud_manual")).toEqual(["a-new", "m3", "m1"]);

    // The merge excludes m2, which the rule matches but was removed by hand; so it stays out of
    // the merged audience when its data changes later. That needs the match the upgrade could not
    // know and the start computed.
    const merged = await audiences.merge(WS, { name: "Both", audienceIds: ["aud_manual", "aud_rule"] });
    expect(await ids(merged.id)).toEqual(["a-new", "m0", "m4", "m3", "m1"]);
    await members.update(WS, "m2", { fields: { role: "Engineer" } });
    await members.update(WS, "m5", { fields: { company: "ACME" } });
    expect(await ids(merged.id)).toEqual(["a-new", "m0", "m5", "m4", "m3", "m1"]);
  });
});
