import { Prisma } from "../../../generated/prisma/client.ts";

import { committing, type SqlClient } from "../../platform/db/sql-client.ts";
import {
  bitOf,
  chunkOf,
  chunksOf,
  kind,
  knownChunksOf,
  knownGroupedChunksOf,
  memberBits,
  NO_BITS,
  storedBits,
  storedHas,
} from "./member-bits-sql.ts";
import { hidden } from "./member-repo.ts";
import {
  changesOf,
  chunkRow,
  clearBits,
  dropChunksOutside,
  evaluatedChunks,
  joinChunk,
  readsByKey,
  replaceChunks,
  type SetChange,
  seqsOf,
  setBits,
  upsertChanged,
  type WriteClosing,
} from "./membership-sql.ts";
import { matchingChunks } from "./rules/audience-algebra-sql.ts";
import type { Filter } from "./rules/filter.ts";
import type { SqlContext } from "./rules/filter-sql.ts";

export type { SetChange } from "./membership-sql.ts";

/**
 * An audience's sets, as bitsets over member numbers (see member-bits-sql.ts): `include` and
 * `exclude` (manual decisions), `match` (what its rule matches) and `member`, kept equal to
 * include ∨ (match ∧ ¬exclude) by every statement here. Each operation is one statement, which
 * also moves the audiences' member_count by what entered and left and returns those changes
 * (see `changesOf`). Only the write path calls these (membership-writer.ts and the rule following
 * it drives), holding the locks src/features/membership/write-locks.ts describes.
 */
export const membershipRepo = {
  /** Adds the members with these numbers by hand: include, no longer exclude (`closing`: changesOf's). */
  async include(tx: SqlClient, workspaceId: string, audienceId: string, seqs: number[], closing?: WriteClosing) {
    if (seqs.length === 0) return [];
    const target = { workspaceId, audienceId };
    return changesOf(
      tx,
      workspaceId,
      Prisma.sql`
      WITH p AS MATERIALIZED (SELECT * FROM ${knownChunksOf(seqs)} AS p),
      d AS MATERIALIZED (
        SELECT ${audienceId}::text AS audience_id, p.chunk, ${storedBits("t")} AS old,
               coalesce(${storedBits("t")}, ${NO_BITS}) | p.bits AS new
        FROM p LEFT JOIN membership_chunks AS t ON ${chunkRow(target, "member")} AND t.chunk = p.chunk
      ),
      i AS (${setBits(target, "include")}),
      e AS (${clearBits(target, "exclude")}),
      m AS (${setBits(target, "member")})`,
      closing,
    );
  },

  /** Removes these members by hand: exclude (a rule cannot bring them back), no longer include. */
  async exclude(tx: SqlClient, workspaceId: string, audienceId: string, memberIds: string[], closing?: WriteClosing) {
    if (memberIds.length === 0) return [];
    const target = { workspaceId, audienceId };
    return changesOf(
      tx,
      workspaceId,
      Prisma.sql`
      WITH p AS MATERIALIZED (SELECT * FROM ${chunksOf(seqsOf(workspaceId, memberIds))} AS p),
      d AS MATERIALIZED (
        SELECT ${audienceId}::text AS audience_id, p.chunk, x.old, x.old & ~p.bits AS new
        FROM p JOIN membership_chunks AS t ON ${chunkRow(target, "member")} AND t.chunk = p.chunk
        CROSS JOIN LATERAL (SELECT ${storedBits("t")} AS old) AS x
      ),
      e AS (${setBits(target, "exclude")}),
      i AS (${clearBits(target, "include")}),
      m AS (${clearBits(target, "member")})`,
      closing,
    );
  },

  /** Evaluates the audience's rule over every member of the workspace and recomputes its members. */
  async recompute(
    tx: SqlClient,
    workspaceId: string,
    audienceId: string,
    filter: Filter | null,
    context: SqlContext,
    closing?: WriteClosing,
  ): Promise<SetChange[]> {
    const target = { workspaceId, audienceId };
    return changesOf(
      tx,
      workspaceId,
      Prisma.sql`
      WITH r AS MATERIALIZED (
        SELECT * FROM (${matchingChunks(workspaceId, filter, context)}) AS r
      ),
      cur AS MATERIALIZED (
        SELECT t.kind, t.chunk, ${storedBits("t")} AS bits FROM membership_chunks AS t
        WHERE t.workspace_id = ${workspaceId} AND t.audience_id = ${audienceId}
      ),
      nm AS MATERIALIZED (
        SELECT c.chunk, ${memberBits(Prisma.sql`i.bits`, Prisma.sql`r.bits`, Prisma.sql`e.bits`)} AS bits
        FROM (SELECT chunk FROM cur WHERE kind = ${kind("include")} UNION SELECT chunk FROM r) AS c
        LEFT JOIN cur AS i ON i.kind = ${kind("include")} AND i.chunk = c.chunk
        LEFT JOIN cur AS e ON e.kind = ${kind("exclude")} AND e.chunk = c.chunk
        LEFT JOIN r ON r.chunk = c.chunk
      ),
      d AS MATERIALIZED (
        SELECT ${audienceId}::text AS audience_id, coalesce(nm.chunk, o.chunk) AS chunk, o.bits AS old, nm.bits AS new
        FROM nm FULL JOIN (SELECT chunk, bits FROM cur WHERE kind = ${kind("member")}) AS o ON o.chunk = nm.chunk
      ),
      r_drop AS (${dropChunksOutside(target, "match", Prisma.sql`SELECT chunk FROM r`)}),
      r_put AS (${replaceChunks(target, "match", Prisma.sql`SELECT chunk, bits FROM r`)}),
      m_drop AS (${dropChunksOutside(target, "member", Prisma.sql`SELECT chunk FROM nm WHERE bits <> ${NO_BITS}`)}),
      m_put AS (${replaceChunks(target, "member", Prisma.sql`SELECT chunk, bits FROM nm WHERE bits <> ${NO_BITS}`)})`,
      closing,
    );
  },

  /**
   * Gives a new audience the union of the sources: their includes, members and rule matches,
   * and as excludes the matches that are members of neither, so that it starts as exactly their
   * union while following either rule.
   */
  async copyUnion(tx: SqlClient, workspaceId: string, targetId: string, sourceIds: string[]): Promise<SetChange[]> {
    return changesOf(
      tx,
      workspaceId,
      Prisma.sql`
      WITH       src AS MATERIALIZED (
        SELECT t.kind, t.chunk, bit_or(${storedBits("t")}) AS bits FROM membership_chunks AS t
        WHERE t.workspace_id = ${workspaceId} AND t.audience_id = ANY(${sourceIds}::text[])
          AND t.kind IN (${kind("include")}, ${kind("member")}, ${kind("match")})
        GROUP BY t.kind, t.chunk
      ),
      d AS (
        SELECT ${targetId}::text AS audience_id, chunk, ${NO_BITS} AS old, bits AS new FROM src WHERE kind = ${kind("member")}
      ),
      copied AS (
        INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits)
        SELECT ${workspaceId}, ${targetId}, kind, chunk, bits FROM src WHERE bits <> ${NO_BITS}
      ),
      excluded AS (
        INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits)
        SELECT ${workspaceId}, ${targetId}, ${kind("exclude")}, x.chunk, x.bits
        FROM (
          SELECT r.chunk, r.bits & ~coalesce(m.bits, ${NO_BITS}) AS bits FROM src AS r
          LEFT JOIN src AS m ON m.kind = ${kind("member")} AND m.chunk = r.chunk
          WHERE r.kind = ${kind("match")}
        ) AS x
        WHERE x.bits <> ${NO_BITS}
      )`,
    );
  },

  /**
   * After members were created or their data changed: sets their bits in each rule-based
   * audience's match set as `matched` says (the rule evaluated in process), and their member
   * bits to include ∨ (match ∧ ¬exclude). `changed` is the members evaluated, for every audience
   * of `matched`; or, per audience, its own (`among`): a clock tick evaluates each audience for
   * the members near its window's edge only, and a domain shared by ten audiences would have each
   * rewrite the chunks of the other nine's members.
   *
   * `along`, to save round trips: `lock`, the audiences' row lock (write-locks.ts
   * followingInStatement), taken before the statement reads or writes a chunk; `writes`, WITH items
   * that ride in the same statement (a member's new data), run alone when nothing is evaluated;
   * `closing`, the write's closing parts when this is its last statement (changesOf).
   */
  async applyMatches(
    tx: SqlClient,
    workspaceId: string,
    changed: number[] | "own",
    matched: { audienceId: string; seqs: number[]; among?: number[] }[],
    along: { lock?: Prisma.Sql | undefined; writes?: Prisma.Sql | undefined; closing?: WriteClosing | undefined } = {},
  ): Promise<SetChange[]> {
    const evaluated = evaluatedChunks(changed, matched);
    if (!evaluated) {
      const { writes, closing } = along;
      const parts = closing?.sql("nothing");
      const items = [writes, parts].filter((item): item is Prisma.Sql => item !== undefined);
      if (items.length > 0) await (closing ? committing(tx) : tx).$executeRaw`WITH ${Prisma.join(items, ",")} SELECT 1`;
      closing?.sent([]);
      return [];
    }
    const byKey = readsByKey(evaluated.count);
    const at = { audience: Prisma.sql`n.audience_id`, chunk: Prisma.sql`n.chunk` };
    // The lock's rows are counted before the first chunk row is read: an uncorrelated subquery in
    // the WHERE of the first step runs once, to its end, before that step returns a row.
    const rows = along.lock
      ? Prisma.sql`locked AS MATERIALIZED (${along.lock}),
        changed AS MATERIALIZED (
          SELECT * FROM (${evaluated.rows}) AS e WHERE (SELECT count(*) FROM locked) >= 0
        )`
      : Prisma.sql`changed AS MATERIALIZED (${evaluated.rows})`;
    return changesOf(
      tx,
      workspaceId,
      Prisma.sql`
      WITH ${along.writes ? Prisma.sql`${along.writes},` : Prisma.empty} ${rows},
      hits AS MATERIALIZED (
        SELECT * FROM ${knownGroupedChunksOf(matched.map(({ audienceId, seqs }) => ({ grp: audienceId, seqs })))} AS h
      ),
      r AS MATERIALIZED (
        SELECT n.audience_id, n.chunk, ${storedBits("old")} AS old,
               (coalesce(${storedBits("old")}, ${NO_BITS}) & ~n.changed) | coalesce(h.bits, ${NO_BITS}) AS bits
        FROM changed AS n
        ${joinChunk("old", workspaceId, "match", at, byKey)}
        LEFT JOIN hits AS h ON h.grp = n.audience_id AND h.chunk = n.chunk
      ),
      m AS MATERIALIZED (
        SELECT n.audience_id, n.chunk, ${storedBits("old")} AS old,
               ${memberBits(storedBits("i"), Prisma.sql`n.bits`, storedBits("e"))} AS bits
        FROM r AS n
        ${joinChunk("i", workspaceId, "include", at, byKey)}
        ${joinChunk("e", workspaceId, "exclude", at, byKey)}
        ${joinChunk("old", workspaceId, "member", at, byKey)}
      ),
      d AS (SELECT audience_id, chunk, old, bits AS new FROM m),
      r_put AS (${upsertChanged(workspaceId, "match", "r")}),
      m_put AS (${upsertChanged(workspaceId, "member", "m")})`,
      along.closing,
    );
  },

  /**
   * Takes members that are being deleted out of every set of every audience of the workspace.
   * The caller holds every audience's row lock.
   */
  async forget(tx: SqlClient, workspaceId: string, seqs: number[]): Promise<SetChange[]> {
    if (seqs.length === 0) return [];
    return changesOf(
      tx,
      workspaceId,
      Prisma.sql`
      WITH p AS MATERIALIZED (
        SELECT * FROM ${knownChunksOf(seqs)} AS p
      ),
      hit AS MATERIALIZED (
        SELECT t.audience_id, t.kind, t.chunk, x.bits, x.bits & ~p.bits AS rest
        FROM audiences AS a
        CROSS JOIN p
        CROSS JOIN unnest(enum_range(NULL::membership_kind)) AS k(kind)
        JOIN membership_chunks AS t
          ON t.workspace_id = a.workspace_id AND t.audience_id = a.id AND t.kind = k.kind AND t.chunk = p.chunk
        CROSS JOIN LATERAL (SELECT ${storedBits("t")} AS bits) AS x
        WHERE a.workspace_id = ${workspaceId} AND (x.bits & p.bits) <> ${NO_BITS}
      ),
      d AS (SELECT audience_id, chunk, bits AS old, rest AS new FROM hit WHERE kind = ${kind("member")}),
      cleared AS (
        UPDATE membership_chunks AS t SET bits = hit.rest FROM hit
        WHERE t.workspace_id = ${workspaceId} AND t.audience_id = hit.audience_id AND t.kind = hit.kind AND t.chunk = hit.chunk
      )`,
    );
  },

  /** The audiences a member belongs to, and whether by hand or by rule. */
  memberAudiences(db: SqlClient, workspaceId: string, memberId: string) {
    return db.$queryRaw<{ id: string; name: string; isArchived: boolean; reason: "manual" | "rule" }[]>`
      SELECT a.id, a.name, a.is_archived AS "isArchived",
             CASE WHEN coalesce(${storedHas("i", bitOf(Prisma.sql`m.seq`))}, false) THEN 'manual' ELSE 'rule' END AS reason
      FROM members AS m
      JOIN audiences AS a ON a.workspace_id = m.workspace_id
      JOIN membership_chunks AS t
        ON t.workspace_id = a.workspace_id AND t.audience_id = a.id AND t.kind = ${kind("member")}
        AND t.chunk = ${chunkOf(Prisma.sql`m.seq`)}
      LEFT JOIN membership_chunks AS i
        ON i.workspace_id = a.workspace_id AND i.audience_id = a.id AND i.kind = ${kind("include")} AND i.chunk = t.chunk
      WHERE m.workspace_id = ${hidden(workspaceId)} AND m.id = ${memberId} AND ${storedHas("t", bitOf(Prisma.sql`m.seq`))}
      ORDER BY a.created_at DESC, a.id DESC`;
  },

  /**
   * Gives a new audience the source's members as its own, added by hand (include and member,
   * no rule, no exclude): a copy of the source's member chunks, so its cost is the number of
   * chunks, not of members. Chunks that removals left empty are not copied.
   */
  async copyMembers(tx: SqlClient, workspaceId: string, targetId: string, sourceId: string): Promise<SetChange[]> {
    return changesOf(
      tx,
      workspaceId,
      Prisma.sql`
      WITH src AS MATERIALIZED (
        SELECT t.chunk, ${storedBits("t")} AS bits FROM membership_chunks AS t
        WHERE t.workspace_id = ${workspaceId} AND t.audience_id = ${sourceId} AND t.kind = ${kind("member")}
          AND t.count > 0
      ),
      d AS (SELECT ${targetId}::text AS audience_id, chunk, ${NO_BITS} AS old, bits AS new FROM src),
      copied AS (
        INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits)
        SELECT ${workspaceId}, ${targetId}, k.kind, src.chunk, src.bits
        FROM src CROSS JOIN (VALUES (${kind("include")}), (${kind("member")})) AS k(kind)
      )`,
    );
  },
};

export type MembershipRepo = typeof membershipRepo;
