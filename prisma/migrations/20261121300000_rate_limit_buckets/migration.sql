-- CreateTable
CREATE TABLE "rate_limit_buckets" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "key_id" TEXT COLLATE "C" NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "rate_limit_buckets_pkey" PRIMARY KEY ("workspace_id","key_id")
);
