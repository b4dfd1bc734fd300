-- The membership record: since when each workspace's record is complete. A workspace created
-- from now on starts with it; one that existed before starts at this migration, with the baseline
-- written below.
ALTER TABLE "workspaces" ADD COLUMN "membership_record_since" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- CreateTable: every entry into and exit from an audience, one row per member and write that moved
-- it (the write's net change), written in the write's transaction by membership-service.ts.
-- Keyed workspace-first, then audience and member number, so that a member's state in an audience
-- at an instant is its last row at or before it, one probe of the key. No foreign key (as
-- activities): audiences are never deleted, and a per-row check would cost a rule change on a
-- million members a million probes.
CREATE TABLE "membership_transitions" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "audience_id" TEXT COLLATE "C" NOT NULL,
    "seq" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL,
    "entered" BOOLEAN NOT NULL,
    "reason" TEXT COLLATE "C" NOT NULL,

    CONSTRAINT "membership_transitions_pkey" PRIMARY KEY ("workspace_id","audience_id","seq","at")
);

-- CreateIndex: an audience's transitions in a span of time (who came and went).
CREATE INDEX "membership_transitions_workspace_id_audience_id_at_idx" ON "membership_transitions"("workspace_id", "audience_id", "at");

-- CreateIndex: one member's transitions across audiences (a member's audiences at an instant).
CREATE INDEX "membership_transitions_workspace_id_seq_idx" ON "membership_transitions"("workspace_id", "seq");

-- CreateTable: the members deleted within the record's horizon, so that a listing of an earlier
-- instant can still name them (their numbers are never handed out again; their ids may be).
CREATE TABLE "deleted_members" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "seq" INTEGER NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deleted_members_pkey" PRIMARY KEY ("workspace_id","seq")
);

-- CreateIndex: a deleted member looked up by its id.
CREATE INDEX "deleted_members_workspace_id_id_idx" ON "deleted_members"("workspace_id", "id");

-- The baseline: every current member of every audience entered at the record's start, so that an
-- instant since then is answered for members that entered before the upgrade, with the reason it
-- is in (`manual` when added by hand, `rule` otherwise). Written here, in the migration's
-- transaction, not at start: no write can come between the baseline and the first transition
-- recorded after it. A span of changes starts at the record's start at the earliest and excludes
-- its start, so the baseline is never told as a change.
INSERT INTO "membership_transitions" ("workspace_id", "audience_id", "seq", "at", "entered", "reason")
SELECT c."workspace_id", c."audience_id", c."chunk" * 8192 + b.i, w."membership_record_since", true,
    CASE WHEN coalesce(get_bit(inc."bits", b.i), 0) = 1 THEN 'manual' ELSE 'rule' END
FROM "membership_chunks" AS c
JOIN "workspaces" AS w ON w."workspace_id" = c."workspace_id"
LEFT JOIN "membership_chunks" AS inc ON inc."workspace_id" = c."workspace_id" AND inc."audience_id" = c."audience_id"
    AND inc."kind" = 'include' AND inc."chunk" = c."chunk"
CROSS JOIN LATERAL (SELECT i FROM generate_series(0, 8191) AS g(i) WHERE get_bit(c."bits", i) = 1) AS b
WHERE c."kind" = 'member' AND c."count" > 0;
