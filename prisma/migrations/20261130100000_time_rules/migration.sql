-- Relative-time rules (withinLast / notWithinLast) follow the clock: evaluated_at is the instant
-- an audience's rule matches were last brought up to date for them (NULL when its rule has no
-- such condition). A tick re-reads only the members whose dates crossed a window's edge since.
ALTER TABLE "audiences" ADD COLUMN "evaluated_at" TIMESTAMPTZ(3);

-- CreateIndex: the audiences that follow the clock (few).
CREATE INDEX "audiences_evaluated_at_idx" ON "audiences"("evaluated_at") WHERE "evaluated_at" IS NOT NULL;

-- CreateTable: the values of date fields as instants, one row per member and declared date
-- field with a value, kept by the statements that write members (and by declaring a field): the
-- index a tick reads the members near a window's edge through. No foreign key to members (as
-- member_emails): the statement that deletes members deletes their rows.
CREATE TABLE "member_dates" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "key" TEXT COLLATE "C" NOT NULL,
    "seq" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "member_dates_pkey" PRIMARY KEY ("workspace_id","key","seq")
);

-- CreateIndex
CREATE INDEX "member_dates_workspace_id_key_at_idx" ON "member_dates"("workspace_id", "key", "at");
