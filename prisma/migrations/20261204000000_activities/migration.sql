-- CreateTable: what members did. Keyed workspace-first and by member number (as member_dates and
-- membership_chunks), so that rules aggregate a workspace's activities set-wise and a member's
-- timeline is one range of the key. The type is a number (activity_types), not repeated text.
-- No foreign key to members (as member_dates): the statement that deletes members deletes their
-- activities. Partitioned by month of occurred_at: on PostgreSQL the retention drops whole
-- partitions (src/features/activities/activity-purge.ts creates them ahead of time); the default
-- partition holds what no month partition covers, so an ingest never fails for want of one. The
-- embedded store keeps everything in the default partition (its DDL is slow) and deletes rows.
CREATE TABLE "activities" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "member_seq" INTEGER NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "num" BIGSERIAL NOT NULL,
    "type_id" INTEGER NOT NULL,
    "id" TEXT COLLATE "C",
    "properties" JSONB,

    CONSTRAINT "activities_pkey" PRIMARY KEY ("workspace_id","member_seq","occurred_at","num")
) PARTITION BY RANGE ("occurred_at");

-- CreateIndex: the client's ids, looked up by an ingest to skip those already stored (unique per
-- workspace: the ingest checks under the workspace's member lock, as a partitioned table can only
-- enforce keys that hold occurred_at).
CREATE INDEX "activities_workspace_id_id_idx" ON "activities"("workspace_id", "id") WHERE "id" IS NOT NULL;

CREATE TABLE "activities_default" PARTITION OF "activities" DEFAULT;

-- CreateTable: the activity types of each workspace, kept exact by the statements that store and
-- delete activities: how many are stored, the latest occurred_at received, and the property keys
-- seen with the JSON types of their values ({"amount": ["number"]}).
CREATE TABLE "activity_types" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "type_id" SERIAL NOT NULL,
    "type" TEXT COLLATE "C" NOT NULL,
    "count" BIGINT NOT NULL DEFAULT 0,
    "last_at" TIMESTAMPTZ(3) NOT NULL,
    "properties" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "activity_types_pkey" PRIMARY KEY ("workspace_id","type_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "activity_types_workspace_id_type_key" ON "activity_types"("workspace_id", "type");

-- AddForeignKey
ALTER TABLE "activity_types" ADD CONSTRAINT "activity_types_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;
