-- CreateTable: each audience's size history by UTC day, beside the hours of audience_history:
-- how many entered and left during the day and its size at the end of it. Written by the same
-- statement as the hour's row (so the days are the sums of their hours), and read as it is: 400
-- days are an index range of at most 400 rows, where summing 9,600 hours per request cost more.
CREATE TABLE "audience_history_day" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "audience_id" TEXT COLLATE "C" NOT NULL,
    "day" TIMESTAMPTZ(3) NOT NULL,
    "entered" INTEGER NOT NULL,
    "left" INTEGER NOT NULL,
    "member_count" INTEGER NOT NULL,

    CONSTRAINT "audience_history_day_pkey" PRIMARY KEY ("workspace_id","audience_id","day")
);

-- CreateIndex: the purge of days older than 400 days reads by time across workspaces.
CREATE INDEX "audience_history_day_day_idx" ON "audience_history_day"("day");

-- AddForeignKey: as audience_history's.
ALTER TABLE "audience_history_day" ADD CONSTRAINT "audience_history_day_workspace_id_audience_id_fkey" FOREIGN KEY ("workspace_id", "audience_id") REFERENCES "audiences"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The days of the hours written so far: their sums, with the size at the end of the last hour.
INSERT INTO "audience_history_day" ("workspace_id", "audience_id", "day", "entered", "left", "member_count")
SELECT "workspace_id", "audience_id", date_trunc('day', "hour" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
       sum("entered")::int, sum("left")::int, (array_agg("member_count" ORDER BY "hour" DESC))[1]
FROM "audience_history"
GROUP BY 1, 2, 3;
