-- CreateIndex: a workspace's activities of one type in a span of time. Rules over activities read
-- it set-wise (a type's activities in a window, aggregated once per statement), and the clock reads
-- the thin span that crossed a window's edge since its last tick, so that only those members are
-- evaluated again.
CREATE INDEX "activities_workspace_id_type_id_occurred_at_idx" ON "activities"("workspace_id", "type_id", "occurred_at");
