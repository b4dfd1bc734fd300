-- CreateTable
CREATE TABLE "idempotency_keys" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "key_id" TEXT COLLATE "C" NOT NULL,
    "idempotency_key" TEXT COLLATE "C" NOT NULL,
    "request_hash" TEXT NOT NULL,
    "status_code" INTEGER,
    "content_type" TEXT,
    "response_body" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("workspace_id","key_id","idempotency_key")
);

-- CreateIndex
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");
