-- Changes flow out. Every write records what it changed in an outbox, in its own transaction (a
-- committed change always has its events, a rolled-back one never does). A relay in the server
-- processes publishes the outbox as the workspace's event feed: it gives each event the next
-- sequence under the workspace's event head lock, so events become visible in sequence order
-- with no gaps, and it queues a delivery for every webhook that selects the event.

-- CreateTable: what writes recorded and the relay has not published yet.
CREATE TABLE "event_outbox" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "id" BIGSERIAL NOT NULL,
    "type" TEXT NOT NULL,
    "audience_id" TEXT COLLATE "C",
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_outbox_pkey" PRIMARY KEY ("workspace_id","id")
);

-- CreateTable: the member sets of outbox entries (who entered and left, who was created), as
-- chunks of member numbers; the relay turns them into member ids.
CREATE TABLE "event_outbox_members" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "outbox_id" BIGINT NOT NULL,
    "part" SMALLINT NOT NULL,
    "chunk" INTEGER NOT NULL,
    "bits" BIT(8192) NOT NULL,

    CONSTRAINT "event_outbox_members_pkey" PRIMARY KEY ("workspace_id","outbox_id","part","chunk")
);

-- CreateTable: deleted members' numbers, so that an outbox entry written before the deletion
-- can still name them; removed once the workspace's outbox is empty.
CREATE TABLE "member_tombstones" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "seq" INTEGER NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "member_tombstones_pkey" PRIMARY KEY ("workspace_id","seq")
);

-- CreateTable: each workspace's feed position; its row lock orders the relays.
CREATE TABLE "event_heads" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "last_sequence" BIGINT NOT NULL DEFAULT 0,
    "first_retained" BIGINT NOT NULL DEFAULT 1,

    CONSTRAINT "event_heads_pkey" PRIMARY KEY ("workspace_id")
);

-- CreateTable: the feed.
CREATE TABLE "events" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "sequence" BIGINT NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "type" TEXT NOT NULL,
    "audience_id" TEXT COLLATE "C",
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "events_pkey" PRIMARY KEY ("workspace_id","sequence")
);

-- CreateTable
CREATE TABLE "webhooks" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "url" TEXT NOT NULL,
    "types" TEXT[],
    "audience_ids" TEXT[],
    "description" TEXT NOT NULL DEFAULT '',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "secret" TEXT NOT NULL,
    "previous_secret" TEXT,
    "previous_secret_until" TIMESTAMPTZ(3),
    "failing_since" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("workspace_id","id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "webhook_id" TEXT COLLATE "C" NOT NULL,
    "event_sequence" BIGINT NOT NULL,
    "event_id" TEXT COLLATE "C" NOT NULL,
    "event_type" TEXT NOT NULL,
    "payload" JSONB,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "leased_until" TIMESTAMPTZ(3),
    "last_attempt_at" TIMESTAMPTZ(3),
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("workspace_id","id")
);

-- CreateIndex: retention removes a workspace's oldest events.
CREATE INDEX "events_workspace_id_created_at_idx" ON "events"("workspace_id", "created_at");

-- CreateIndex: the deliveries that are due, oldest first, across workspaces.
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex: a webhook's delivery log, most recent first.
CREATE INDEX "webhook_deliveries_workspace_id_webhook_id_created_at_id_idx" ON "webhook_deliveries"("workspace_id", "webhook_id", "created_at", "id");

-- AddForeignKey
ALTER TABLE "event_outbox" ADD CONSTRAINT "event_outbox_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "event_outbox_members" ADD CONSTRAINT "event_outbox_members_workspace_id_outbox_id_fkey" FOREIGN KEY ("workspace_id", "outbox_id") REFERENCES "event_outbox"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "member_tombstones" ADD CONSTRAINT "member_tombstones_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "event_heads" ADD CONSTRAINT "event_heads_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_workspace_id_webhook_id_fkey" FOREIGN KEY ("workspace_id", "webhook_id") REFERENCES "webhooks"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every existing workspace starts with an empty feed.
INSERT INTO "event_heads" ("workspace_id") SELECT "workspace_id" FROM "workspaces";
