-- CreateEnum
CREATE TYPE "entry_kind" AS ENUM ('include', 'exclude');

-- CreateTable
CREATE TABLE "workspaces" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspaces_pkey" PRIMARY KEY ("workspace_id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "name" TEXT NOT NULL,
    "secret_hash" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("workspace_id","id")
);

-- CreateTable
CREATE TABLE "audiences" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "name" TEXT NOT NULL,
    "name_key" TEXT,
    "filter" JSONB,
    "is_archived" BOOLEAN NOT NULL DEFAULT false,
    "archived_at" TIMESTAMPTZ(3),
    "member_count" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audiences_pkey" PRIMARY KEY ("workspace_id","id")
);

-- CreateTable
CREATE TABLE "members" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "email" TEXT,
    "fields" JSONB NOT NULL DEFAULT '{}',
    "alternative_emails" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "members_pkey" PRIMARY KEY ("workspace_id","id")
);

-- CreateTable
CREATE TABLE "member_emails" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "email_key" TEXT COLLATE "C" NOT NULL,
    "member_id" TEXT COLLATE "C" NOT NULL,

    CONSTRAINT "member_emails_pkey" PRIMARY KEY ("workspace_id","email_key")
);

-- CreateTable
CREATE TABLE "audience_entries" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "audience_id" TEXT COLLATE "C" NOT NULL,
    "member_id" TEXT COLLATE "C" NOT NULL,
    "kind" "entry_kind" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audience_entries_pkey" PRIMARY KEY ("workspace_id","audience_id","member_id")
);

-- CreateTable
CREATE TABLE "audience_members" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "audience_id" TEXT COLLATE "C" NOT NULL,
    "member_id" TEXT COLLATE "C" NOT NULL,
    "member_created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "audience_members_pkey" PRIMARY KEY ("workspace_id","audience_id","member_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "audiences_workspace_id_name_key_key" ON "audiences"("workspace_id", "name_key");

-- CreateIndex
CREATE INDEX "audiences_workspace_id_created_at_idx" ON "audiences"("workspace_id", "created_at");

-- CreateIndex
CREATE INDEX "members_workspace_id_created_at_id_idx" ON "members"("workspace_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "member_emails_workspace_id_member_id_idx" ON "member_emails"("workspace_id", "member_id");

-- CreateIndex
CREATE INDEX "audience_entries_workspace_id_member_id_idx" ON "audience_entries"("workspace_id", "member_id");

-- CreateIndex
CREATE INDEX "audience_members_workspace_id_audience_id_member_created_at_idx" ON "audience_members"("workspace_id", "audience_id", "member_created_at", "member_id");

-- CreateIndex
CREATE INDEX "audience_members_workspace_id_member_id_idx" ON "audience_members"("workspace_id", "member_id");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audiences" ADD CONSTRAINT "audiences_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "members" ADD CONSTRAINT "members_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "member_emails" ADD CONSTRAINT "member_emails_workspace_id_member_id_fkey" FOREIGN KEY ("workspace_id", "member_id") REFERENCES "members"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audience_entries" ADD CONSTRAINT "audience_entries_workspace_id_audience_id_fkey" FOREIGN KEY ("workspace_id", "audience_id") REFERENCES "audiences"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audience_entries" ADD CONSTRAINT "audience_entries_workspace_id_member_id_fkey" FOREIGN KEY ("workspace_id", "member_id") REFERENCES "members"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audience_members" ADD CONSTRAINT "audience_members_workspace_id_audience_id_fkey" FOREIGN KEY ("workspace_id", "audience_id") REFERENCES "audiences"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audience_members" ADD CONSTRAINT "audience_members_workspace_id_member_id_fkey" FOREIGN KEY ("workspace_id", "member_id") REFERENCES "members"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
