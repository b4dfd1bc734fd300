-- CreateTable: each audience's size history, one row per UTC hour in which its members changed:
-- how many entered and left during that hour and its size at the end of it. Written in the same
-- transaction as every membership change (one statement per write), so it is exact; read by
-- audienceHistory (day buckets are sums of hours). Kept 400 days whatever the event retention:
-- the events cannot rebuild it, since they are purged sooner.
CREATE TABLE "audience_history" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "audience_id" TEXT COLLATE "C" NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "entered" INTEGER NOT NULL,
    "left" INTEGER NOT NULL,
    "member_count" INTEGER NOT NULL,

    CONSTRAINT "audience_history_pkey" PRIMARY KEY ("workspace_id","audience_id","hour")
);

-- CreateIndex: the purge of rows older than 400 days reads by time across workspaces.
CREATE INDEX "audience_history_hour_idx" ON "audience_history"("hour");

-- AddForeignKey: archived audiences keep their rows (archiving deletes nothing); a workspace's
-- deletion takes them with its audiences.
ALTER TABLE "audience_history" ADD CONSTRAINT "audience_history_workspace_id_audience_id_fkey" FOREIGN KEY ("workspace_id", "audience_id") REFERENCES "audiences"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
