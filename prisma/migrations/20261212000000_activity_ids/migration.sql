-- CreateTable: the client's ids of a workspace's activities, each with its activity's member and
-- time (the leading columns of activities' key). Not partitioned, so that an ingest finds a
-- repeated id by one probe of this key and claims new ones by INSERT … ON CONFLICT DO NOTHING in
-- the statement that stores the activities; on activities, partitioned by month, the same lookup
-- probed one index per month. The statements that delete activities (a member's delete, the
-- retention's purge) delete their ids.
CREATE TABLE "activity_ids" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "member_seq" INTEGER NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "activity_ids_pkey" PRIMARY KEY ("workspace_id","id")
);

-- CreateIndex: the retention's purge deletes the ids of what it drops by a range of time, across
-- workspaces (as it drops months).
CREATE INDEX "activity_ids_occurred_at_idx" ON "activity_ids"("occurred_at");

-- The ids already stored.
INSERT INTO "activity_ids" ("workspace_id", "id", "member_seq", "occurred_at")
SELECT "workspace_id", "id", "member_seq", "occurred_at" FROM "activities" WHERE "id" IS NOT NULL
ON CONFLICT DO NOTHING;

-- DropIndex: nothing looks activities up by the client's id any more (activity_ids does).
DROP INDEX "activities_workspace_id_id_idx";
