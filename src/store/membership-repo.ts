import { Prisma, type PrismaClient } from "../../generated/prisma/client.ts";
import type { Filter } from "../domain/filter.ts";
import type { Tx } from "./database.ts";
import { filterSql } from "./filter-sql.ts";
import { jsonRows } from "./json-rows.ts";
import { bitOf, chunkOf, chunksOf, groupedChunksOf, kind, NO_BITS, type SetKind } from "./member-bits.ts";
import { byIds } from "./member-repo.ts";

/**
 * An audience's sets, as bitsets over member numbers (see member-bits.ts): `include` and
 * `exclude` (manual decisions), `match` (what its rule matches) and `member`, kept equal to
 * include ∨ (match ∧ ¬exclude) by every statement here. Callers hold the audience row lock
 * (audienceRepo.lock) and keep member_count in step with the counts these return.
 *
 * Each operation is one statement: the sets it computes are CTEs that its writes share.
 */
export const membershipRepo = {
  /** Adds the members with these numbers by hand (include, no longer exclude); returns how many joined. */
  async include(tx: Tx, workspaceId: string, audienceId: string, seqs: number[]): Promise<number> {
    if (seqs.length === 0) return 0;
    const target = { workspaceId, audienceId };
    const [row] = await tx.$queryRaw<{ count: number }[]>`
      WITH p AS MATERIALIZED (SELECT * FROM ${chunksOf(numbers(seqs))} AS p),
      joined AS (${countOutside(target)}),
      i AS (${setBits(target, "include")}),
      e AS (${clearBits(target, "exclude")}),
      m AS (${setBits(target, "member")})
      SELECT count FROM joined`;
    return row?.count ?? 0;
  },

  /**
   * Removes the existing members by hand (exclude, so a rule cannot bring them back; no longer
   * include); returns how many left.
   */
  async exclude(tx: Tx, workspaceId: string, audienceId: string, memberIds: string[]): Promise<number> {
    if (memberIds.length === 0) return 0;
    const target = { workspaceId, audienceId };
    const [row] = await tx.$queryRaw<{ count: number }[]>`
      WITH p AS MATERIALIZED (SELECT * FROM ${chunksOf(seqsOf(workspaceId, memberIds))} AS p),
      leaving AS (
        SELECT coalesce(sum(bit_count(t.bits & p.bits)), 0)::int AS count FROM p
        JOIN membership_chunks AS t ON ${chunkRow(target, "member")} AND t.chunk = p.chunk
      ),
      e AS (${setBits(target, "exclude")}),
      i AS (${clearBits(target, "include")}),
      m AS (${clearBits(target, "member")})
      SELECT count FROM leaving`;
    return row?.count ?? 0;
  },

  /**
   * Evaluates the audience's rule over every member of the workspace and makes its members
   * include ∨ (match ∧ ¬exclude) again. Returns how much its member count changed.
   */
  async recompute(tx: Tx, workspaceId: string, audienceId: string, filter: Filter | null): Promise<number> {
    const target = { workspaceId, audienceId };
    const [row] = await tx.$queryRaw<{ delta: number }[]>`
      WITH r AS MATERIALIZED (
        SELECT * FROM ${chunksOf(Prisma.sql`SELECT m.seq FROM members AS m WHERE m.workspace_id = ${workspaceId} AND ${filterSql(filter)}`)} AS r
      ),
      cur AS MATERIALIZED (
        SELECT t.kind, t.chunk, t.bits, t.count FROM membership_chunks AS t
        WHERE t.workspace_id = ${workspaceId} AND t.audience_id = ${audienceId}
      ),
      m AS MATERIALIZED (
        SELECT c.chunk, coalesce(i.bits, ${NO_BITS}) | (coalesce(r.bits, ${NO_BITS}) & ~coalesce(e.bits, ${NO_BITS})) AS bits
        FROM (SELECT chunk FROM cur WHERE kind = ${kind("include")} UNION SELECT chunk FROM r) AS c
        LEFT JOIN cur AS i ON i.kind = ${kind("include")} AND i.chunk = c.chunk
        LEFT JOIN cur AS e ON e.kind = ${kind("exclude")} AND e.chunk = c.chunk
        LEFT JOIN r ON r.chunk = c.chunk
      ),
      r_drop AS (${dropChunksOutside(target, "match", Prisma.sql`SELECT chunk FROM r`)}),
      r_put AS (${replaceChunks(target, "match", Prisma.sql`SELECT chunk, bits FROM r`)}),
      m_drop AS (${dropChunksOutside(target, "member", Prisma.sql`SELECT chunk FROM m WHERE bits <> ${NO_BITS}`)}),
      m_put AS (${replaceChunks(target, "member", Prisma.sql`SELECT chunk, bits FROM m WHERE bits <> ${NO_BITS}`)})
      SELECT ((SELECT coalesce(sum(bit_count(bits)), 0) FROM m)
            - (SELECT coalesce(sum(count), 0) FROM cur WHERE kind = ${kind("member")}))::int AS delta`;
    return row?.delta ?? 0;
  },

  /**
   * Gives a new audience the union of the sources: their includes, members and rule matches,
   * and as excludes the matches that are members of neither, so that it starts as exactly their
   * union while following either rule. Returns its member count.
   */
  async copyUnion(tx: Tx, workspaceId: string, targetId: string, sourceIds: string[]): Promise<number> {
    const [row] = await tx.$queryRaw<{ count: number }[]>`
      WITH src AS MATERIALIZED (
        SELECT t.kind, t.chunk, bit_or(t.bits) AS bits FROM membership_chunks AS t
        WHERE t.workspace_id = ${workspaceId} AND t.audience_id = ANY(${sourceIds}::text[])
          AND t.kind IN (${kind("include")}, ${kind("member")}, ${kind("match")})
        GROUP BY t.kind, t.chunk
      ),
      copied AS (
        INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits, count)
        SELECT ${workspaceId}, ${targetId}, kind, chunk, bits, bit_count(bits) FROM src WHERE bits <> ${NO_BITS}
      ),
      excluded AS (
        INSERT INTO membership_chunks (workspace_id, audience_id, kind, chunk, bits, count)
        SELECT ${workspaceId}, ${targetId}, ${kind("exclude")}, x.chunk, x.bits, bit_count(x.bits)
        FROM (
          SELECT r.chunk, r.bits & ~coalesce(m.bits, ${NO_BITS}) AS bits FROM src AS r
          LEFT JOIN src AS m ON m.kind = ${kind("member")} AND m.chunk = r.chunk
          WHERE r.kind = ${kind("match")}
        ) AS x
        WHERE x.bits <> ${NO_BITS}
      )
      SELECT coalesce(sum(bit_count(bits)) FILTER (WHERE kind = ${kind("member")}), 0)::int AS count FROM src`;
    return row?.count ?? 0;
  },

  /**
   * After members were created or their data changed: sets their bits in each rule-based
   * audience's match set as `matched` says (the rule evaluated in process), and their member
   * bits to include ∨ (match ∧ ¬exclude). Returns each audience's member count change.
   */
  async applyMatches(
    tx: Tx,
    workspaceId: string,
    changed: number[],
    matched: { audienceId: string; seqs: number[] }[],
  ): Promise<Map<string, number>> {
    if (changed.length === 0 || matched.length === 0) return new Map();
    const pairs = matched.flatMap(({ audienceId, seqs }) => seqs.map((seq) => [audienceId, seq] as const));
    const on = (alias: string, k: SetKind) =>
      Prisma.sql`${Prisma.raw(alias)}.workspace_id = ${workspaceId} AND ${Prisma.raw(alias)}.audience_id = n.audience_id
        AND ${Prisma.raw(alias)}.kind = ${kind(k)} AND ${Prisma.raw(alias)}.chunk = n.chunk`;
    const rows = await tx.$queryRaw<{ audienceId: string; delta: number }[]>`
      WITH changed AS MATERIALIZED (
        SELECT * FROM ${chunksOf(numbers(changed))} AS c
      ),
      hits AS MATERIALIZED (
        SELECT * FROM ${groupedChunksOf(
          Prisma.sql`SELECT v.grp, v.seq::int AS seq FROM ${jsonRows("v", { grp: pairs.map((p) => p[0]), seq: pairs.map((p) => p[1]) })}`,
        )} AS h
      ),
      r AS MATERIALIZED (
        SELECT n.audience_id, n.chunk, old.bits AS old,
               (coalesce(old.bits, ${NO_BITS}) & ~n.changed) | coalesce(h.bits, ${NO_BITS}) AS bits
        FROM (SELECT a.id AS audience_id, c.chunk, c.bits AS changed
              FROM unnest(${matched.map((m) => m.audienceId)}::text[]) AS a(id) CROSS JOIN changed AS c) AS n
        LEFT JOIN membership_chunks AS old ON ${on("old", "match")}
        LEFT JOIN hits AS h ON h.grp = n.audience_id AND h.chunk = n.chunk
      ),
      m AS MATERIALIZED (
        SELECT n.audience_id, n.chunk, old.bits AS old,
               coalesce(i.bits, ${NO_BITS}) | (n.bits & ~coalesce(e.bits, ${NO_BITS})) AS bits
        FROM r AS n
        LEFT JOIN membership_chunks AS i ON ${on("i", "include")}
        LEFT JOIN membership_chunks AS e ON ${on("e", "exclude")}
        LEFT JOIN membership_chunks AS old ON ${on("old", "member")}
      ),
      r_put AS (${upsertChanged(workspaceId, "match", "r")}),
      m_put AS (${upsertChanged(workspaceId, "member", "m")})
      SELECT audience_id AS "audienceId", sum(bit_count(bits) - coalesce(bit_count(old), 0))::int AS delta
      FROM m WHERE coalesce(old, ${NO_BITS}) <> bits GROUP BY audience_id`;
    return new Map(rows.map((row) => [row.audienceId, row.delta]));
  },

  /**
   * Takes members that are being deleted out of every set of every audience of the workspace;
   * returns how many members each audience lost. The caller holds every audience's row lock.
   */
  async forget(tx: Tx, workspaceId: string, seqs: number[]): Promise<Map<string, number>> {
    if (seqs.length === 0) return new Map();
    const rows = await tx.$queryRaw<{ audienceId: string; removed: number }[]>`
      WITH p AS MATERIALIZED (
        SELECT * FROM ${chunksOf(numbers(seqs))} AS p
      ),
      hit AS MATERIALIZED (
        SELECT t.audience_id, t.kind, t.chunk, bit_count(t.bits & p.bits)::int AS n, t.bits & ~p.bits AS rest
        FROM audiences AS a
        CROSS JOIN p
        CROSS JOIN unnest(enum_range(NULL::membership_kind)) AS k(kind)
        JOIN membership_chunks AS t
          ON t.workspace_id = a.workspace_id AND t.audience_id = a.id AND t.kind = k.kind AND t.chunk = p.chunk
        WHERE a.workspace_id = ${workspaceId} AND (t.bits & p.bits) <> ${NO_BITS}
      ),
      cleared AS (
        UPDATE membership_chunks AS t SET bits = hit.rest, count = t.count - hit.n FROM hit
        WHERE t.workspace_id = ${workspaceId} AND t.audience_id = hit.audience_id AND t.kind = hit.kind AND t.chunk = hit.chunk
      )
      SELECT audience_id AS "audienceId", sum(n)::int AS removed FROM hit WHERE kind = ${kind("member")} GROUP BY audience_id`;
    return new Map(rows.map((row) => [row.audienceId, row.removed]));
  },

  /** The audiences a member belongs to, and whether by hand or by rule. */
  memberAudiences(db: Tx | PrismaClient, workspaceId: string, memberId: string) {
    return db.$queryRaw<{ id: string; name: string; isArchived: boolean; reason: "manual" | "rule" }[]>`
      SELECT a.id, a.name, a.is_archived AS "isArchived",
             CASE WHEN coalesce(get_bit(i.bits, ${bitOf(Prisma.sql`m.seq`)}), 0) = 1 THEN 'manual' ELSE 'rule' END AS reason
      FROM members AS m
      JOIN audiences AS a ON a.workspace_id = m.workspace_id
      JOIN membership_chunks AS t
        ON t.workspace_id = a.workspace_id AND t.audience_id = a.id AND t.kind = ${kind("member")}
        AND t.chunk = ${chunkOf(Prisma.sql`m.seq`)}
      LEFT JOIN membership_chunks AS i
        ON i.workspace_id = a.workspace_id AND i.audience_id = a.id AND i.kind = ${kind("include")} AND i.chunk = t.chunk
      WHERE m.workspace_id = ${workspaceId} AND m.id = ${memberId} AND get_bit(t.bits, ${bitOf(Prisma.sql`m.seq`)}) = 1
      ORDER BY a.created_at DESC, a.id DESC`;
  },
};

interface Target {
  workspaceId: string;
  audienceId: string;
}

/** These member numbers, as a query of `seq`. */
const numbers = (seqs: number[]) => Prisma.sql`SELECT v.seq::int AS seq FROM ${jsonRows("v", { seq: seqs })}`;

/** The member numbers of these ids (unknown ids have none). */
const seqsOf = (workspaceId: string, memberIds: string[]) =>
  Prisma.sql`SELECT m.seq FROM ${byIds(workspaceId, memberIds)}`;

/** The target's row of a kind for the chunk aliased t (join condition). */
const chunkRow = ({ workspaceId, audienceId }: Target, k: SetKind) =>
  Prisma.sql`t.workspace_id = ${workspaceId} AND t.audience_id = ${audienceId} AND t.kind = ${kind(k)}`;

/** How many of the bits in p are not yet members of the target. */
const countOutside = (target: Target) => Prisma.sql`
  SELECT coalesce(sum(bit_count(p.bits & ~coalesce(t.bits, ${NO_BITS}))), 0)::int AS count FROM p
  LEFT JOIN membership_chunks AS t ON ${chunkRow(target, "member")} AND t.chunk = p.chunk`;

/** Sets the bits of p in the target's set of a kind (writing only chunks that change). */
const setBits = ({ workspaceId, audienceId }: Target, k: SetKind) => Prisma.sql`
  INSERT INTO membership_chunks AS t (workspace_id, audience_id, kind, chunk, bits, count)
  SELECT ${workspaceId}, ${audienceId}, ${kind(k)}, p.chunk, p.bits, bit_count(p.bits) FROM p
  ON CONFLICT (workspace_id, audience_id, kind, chunk) DO UPDATE
  SET bits = t.bits | EXCLUDED.bits, count = bit_count(t.bits | EXCLUDED.bits)
  WHERE (t.bits | EXCLUDED.bits) <> t.bits`;

/** Clears the bits of p in the target's set of a kind. */
const clearBits = (target: Target, k: SetKind) => Prisma.sql`
  UPDATE membership_chunks AS t SET bits = t.bits & ~p.bits, count = bit_count(t.bits & ~p.bits) FROM p
  WHERE ${chunkRow(target, k)} AND t.chunk = p.chunk AND (t.bits & p.bits) <> ${NO_BITS}`;

/** Deletes the target's chunks of a kind that `keep` (a query of chunk numbers) does not list. */
const dropChunksOutside = (target: Target, k: SetKind, keep: Prisma.Sql) => Prisma.sql`
  DELETE FROM membership_chunks AS t WHERE ${chunkRow(target, k)} AND t.chunk NOT IN (${keep})`;

/** Writes `chunks` (a query of chunk, bits) as the target's chunks of a kind. */
const replaceChunks = ({ workspaceId, audienceId }: Target, k: SetKind, chunks: Prisma.Sql) => Prisma.sql`
  INSERT INTO membership_chunks AS t (workspace_id, audience_id, kind, chunk, bits, count)
  SELECT ${workspaceId}, ${audienceId}, ${kind(k)}, c.chunk, c.bits, bit_count(c.bits) FROM (${chunks}) AS c
  ON CONFLICT (workspace_id, audience_id, kind, chunk) DO UPDATE
  SET bits = EXCLUDED.bits, count = EXCLUDED.count WHERE t.bits <> EXCLUDED.bits`;

/** Writes the rows of a CTE (audience_id, chunk, old, bits) whose bits changed, as chunks of a kind. */
const upsertChanged = (workspaceId: string, k: SetKind, cte: string) => Prisma.sql`
  INSERT INTO membership_chunks AS t (workspace_id, audience_id, kind, chunk, bits, count)
  SELECT ${workspaceId}, x.audience_id, ${kind(k)}, x.chunk, x.bits, bit_count(x.bits) FROM ${Prisma.raw(cte)} AS x
  WHERE coalesce(x.old, ${NO_BITS}) <> x.bits
  ON CONFLICT (workspace_id, audience_id, kind, chunk) DO UPDATE SET bits = EXCLUDED.bits, count = EXCLUDED.count`;
