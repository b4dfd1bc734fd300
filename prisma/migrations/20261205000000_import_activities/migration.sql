-- AlterTable: an import job reads its file as members or as activities; an activity file's
-- counts are those of an ingest (stored, already stored, older than the retention).
ALTER TABLE "import_jobs" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'members',
ADD COLUMN "accepted" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "duplicates" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "expired" INTEGER NOT NULL DEFAULT 0;
