import type { SqlClient } from "../../platform/db/sql-client.ts";
import { kind, storedBits } from "../membership/member-bits-sql.ts";

export interface OverlapCounts {
  /** The audiences found, in the order given; an id missing here is not an audience of the workspace. */
  audiences: { id: string; memberCount: number }[];
  /** The intersection of the i-th and j-th audience found (i < j); a pair without common members is absent. */
  pairs: { i: number; j: number; count: number }[];
  /** The intersection of every audience found. */
  all: number;
}

/** How audiences' member sets overlap: the insight feature's read of them (bitsets, see member-bits-sql.ts). */
export const overlapRepo = {
  /**
   * Sizes, pairwise intersections and the intersection of all, in one statement. Each audience's
   * member chunks are read once; a pair costs a bit_count(a & b) per chunk both have, and the
   * intersection of all a bit_and per chunk that every audience has (a chunk one lacks is empty).
   * Each pair's counts are taken before they are grouped (OFFSET 0 keeps them there): a grouping
   * by sort would otherwise carry both 1 KB chunks of every pair, and spill to disk.
   * The answer comes back as one JSON document (see audience-repo.ts `list`).
   */
  async overlap(db: SqlClient, workspaceId: string, audienceIds: string[]): Promise<OverlapCounts> {
    const [row] = await db.$queryRaw<{ doc: string }[]>`
      WITH known AS MATERIALIZED (
        SELECT (v.ord - 1)::int AS ord, a.id, a.member_count
        FROM unnest(${audienceIds}::text[]) WITH ORDINALITY AS v(id, ord)
        JOIN audiences AS a ON a.workspace_id = ${workspaceId} AND a.id = v.id
      ),
      c AS MATERIALIZED (
        SELECT k.ord, t.chunk, ${storedBits("t")} AS bits FROM known AS k
        JOIN membership_chunks AS t
          ON t.workspace_id = ${workspaceId} AND t.audience_id = k.id AND t.kind = ${kind("member")}
      ),
      pairs AS (
        SELECT p.i, p.j, sum(p.n)::int AS count FROM (
          SELECT x.ord AS i, y.ord AS j, bit_count(x.bits & y.bits) AS n
          FROM c AS x JOIN c AS y ON y.chunk = x.chunk AND y.ord > x.ord
          OFFSET 0
        ) AS p
        GROUP BY p.i, p.j
      ),
      shared AS (
        SELECT bit_and(c.bits) AS bits FROM c GROUP BY c.chunk HAVING count(*) = (SELECT count(*) FROM known)
      )
      SELECT json_build_array(
        (SELECT coalesce(json_agg(json_build_array(k.id, k.member_count) ORDER BY k.ord), '[]') FROM known AS k),
        (SELECT coalesce(json_agg(json_build_array(p.i, p.j, p.count)), '[]') FROM pairs AS p),
        (SELECT coalesce(sum(bit_count(e.bits)), 0)::int FROM shared AS e)
      )::text AS doc`;
    const [audiences, pairs, all] = JSON.parse(row?.doc ?? "[[],[],0]") as [
      [string, number][],
      [number, number, number][],
      number,
    ];
    return {
      audiences: audiences.map(([id, memberCount]) => ({ id, memberCount })),
      pairs: pairs.map(([i, j, count]) => ({ i, j, count })),
      all,
    };
  },
};

export type OverlapRepo = typeof overlapRepo;
