-- CSV import jobs. An upload is stored as it arrives, in parts of about 1 MiB, so that every server
-- process can read it and a restart does not lose it; a runner in one of the processes then
-- applies it in chunks, each committed with the job's progress, under a lease that other
-- processes respect (status 'uploading' while the file is still arriving: not shown to clients).

-- CreateTable
CREATE TABLE "import_jobs" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "audience_id" TEXT COLLATE "C",
    "status" TEXT NOT NULL DEFAULT 'uploading',
    "bytes" BIGINT NOT NULL DEFAULT 0,
    "parts" INTEGER NOT NULL DEFAULT 0,
    "rows_read" INTEGER NOT NULL DEFAULT 0,
    "created" INTEGER NOT NULL DEFAULT 0,
    "merged" INTEGER NOT NULL DEFAULT 0,
    "unchanged" INTEGER NOT NULL DEFAULT 0,
    "rejected" INTEGER NOT NULL DEFAULT 0,
    "errors" JSONB NOT NULL DEFAULT '[]',
    "failure_reason" TEXT,
    "lease_token" TEXT,
    "leased_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "import_jobs_pkey" PRIMARY KEY ("workspace_id","id")
);

-- CreateTable: the uploaded file, part after part, until its job ends.
CREATE TABLE "import_parts" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "import_id" TEXT COLLATE "C" NOT NULL,
    "part" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "import_parts_pkey" PRIMARY KEY ("workspace_id","import_id","part")
);

-- CreateIndex: a workspace's jobs, most recent first.
CREATE INDEX "import_jobs_workspace_id_created_at_idx" ON "import_jobs"("workspace_id", "created_at");

-- CreateIndex: the jobs waiting for a runner, oldest first, across workspaces.
CREATE INDEX "import_jobs_status_created_at_idx" ON "import_jobs"("status", "created_at");

-- AddForeignKey
ALTER TABLE "import_jobs" ADD CONSTRAINT "import_jobs_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "import_parts" ADD CONSTRAINT "import_parts_workspace_id_import_id_fkey" FOREIGN KEY ("workspace_id", "import_id") REFERENCES "import_jobs"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
