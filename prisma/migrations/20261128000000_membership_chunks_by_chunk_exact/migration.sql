-- The index on the chunks at one member-number range across audiences ends with the audience, so
-- that a probe for one audience's chunk at one number is exact through it as well as through the
-- primary key. Without statistics (a new workspace, or PostgreSQL with autovacuum off) the planner
-- took the three-column index for those probes, the smaller of two it thought equally good, and
-- filtered every audience's chunk at that number: following one member's change through 100 rule
-- audiences read 100 × 100 chunk rows, 16 ms where that chunk number had been rewritten often.
CREATE INDEX "membership_chunks_workspace_id_kind_chunk_audience_id_idx" ON "membership_chunks"("workspace_id", "kind", "chunk", "audience_id");
DROP INDEX "membership_chunks_workspace_id_kind_chunk_idx";
