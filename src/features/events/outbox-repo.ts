import { Prisma } from "../../../generated/prisma/client.ts";
import { bitsOfText, chunkText } from "../membership/member-bits-sql.ts";
import type { MemberSet } from "../membership/member-set.ts";
import type { OutboxEntry } from "../membership/outbox-entries.ts";

/**
 * The member sets an entry carries in the process: part 0 the members created. An
 * audience.members_changed entry's sets are the write's `rec_chg` rows of its index (part 0
 * entered, part 1 left), which the closing statement defines (membership's transition-repo.ts).
 */
const setsOf = (entry: OutboxEntry): MemberSet[] => (entry.type === "members.created" ? [entry.created] : []);

/** What an entry keeps in data: everything but its member sets. */
function dataOf(entry: OutboxEntry): Record<string, unknown> {
  switch (entry.type) {
    case "audience.members_changed":
      return { reason: entry.reason };
    case "members.created":
      return {};
    default: {
      const { type: _type, ...data } = entry;
      return data;
    }
  }
}

/** The outbox: what writes recorded, until the relay publishes it (event-repo.ts). */
export const outboxRepo = {
  /**
   * The statements that record entries in the write's transaction, with ids in the order given
   * (the relay publishes in id order), as common table expressions (named ob_*) of the write's one
   * closing statement (membership's transition-repo.ts `writeRecords`), which also keeps the
   * membership record and the size history: a round trip each cost more than their rows. An
   * audience.members_changed entry's members are read from that statement's `rec_chg`, and an
   * entry with no rows there (an audience its statement did not change after all) is not recorded.
   * Undefined when there are no entries.
   */
  appendSql(workspaceId: string, entries: OutboxEntry[]): Prisma.Sql | undefined {
    if (entries.length === 0) return undefined;
    const rows = entries.map((entry, i) => ({
      ord: i,
      type: entry.type,
      audience_id: "audienceId" in entry ? entry.audienceId : null,
      data: dataOf(entry),
    }));
    const chunks = entries.flatMap((entry, ord) =>
      setsOf(entry).flatMap((set, part) =>
        [...set].map(([chunk, bytes]) => ({ ord, part, chunk, bits: chunkText(bytes) })),
      ),
    );
    const changed = entries.some((entry) => entry.type === "audience.members_changed");
    return Prisma.sql`
      ob_v AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(ord int, type text, audience_id text, data jsonb)
        ${changed ? Prisma.sql`WHERE v.type <> 'audience.members_changed' OR v.ord IN (SELECT ord FROM rec_chg)` : Prisma.empty}
      ),
      ob_ids AS MATERIALIZED (
        SELECT o.ord, nextval(pg_get_serial_sequence('event_outbox', 'id')) AS id FROM (SELECT ord FROM ob_v ORDER BY ord) AS o
      ),
      ob_e AS (
        INSERT INTO event_outbox (workspace_id, id, type, audience_id, data)
        SELECT ${workspaceId}, ob_ids.id, ob_v.type, ob_v.audience_id, ob_v.data FROM ob_v JOIN ob_ids USING (ord)
      ),
      ob_c AS (
        INSERT INTO event_outbox_members (workspace_id, outbox_id, part, chunk, bits)
        SELECT ${workspaceId}, ob_ids.id, m.part, m.chunk, m.bits
        FROM (
          SELECT m.ord, m.part, m.chunk, ${bitsOfText(Prisma.sql`m.bits`)} AS bits
          FROM jsonb_to_recordset(${JSON.stringify(chunks)}::jsonb) AS m(ord int, part int, chunk int, bits text)
          ${
            changed
              ? Prisma.sql`UNION ALL SELECT ord, 0, chunk, entered FROM rec_chg WHERE entered IS NOT NULL
          UNION ALL SELECT ord, 1, chunk, exited FROM rec_chg WHERE exited IS NOT NULL`
              : Prisma.empty
          }
        ) AS m
        JOIN ob_ids USING (ord)
      )`;
  },
};

export type OutboxRepo = typeof outboxRepo;
