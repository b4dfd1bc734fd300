-- The uploaded file's name, as the client gave it (createImport's `name`), so that a list of
-- imports says which file each was. Null for a job uploaded without one, and for every job before.
ALTER TABLE "import_jobs" ADD COLUMN "name" TEXT;
