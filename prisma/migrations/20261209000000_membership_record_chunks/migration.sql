-- The membership record as chunks: one row per write, audience, member-number chunk (8,192
-- members, as membership_chunks) and reason, instead of one row per member moved. A rule change
-- that moved 200,000 members wrote 200,000 rows of ~360 bytes; it now writes one row per chunk
-- it touched (~25 for 200,000 members on a million), each holding who entered, who left and the
-- chunk's members after the write, so that the members at an instant are, per chunk, the latest
-- row before it: one probe of the key per chunk, however old the instant.
CREATE TABLE "membership_record" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "audience_id" TEXT COLLATE "C" NOT NULL,
    "chunk" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL,
    "reason" TEXT COLLATE "C" NOT NULL,
    "entered" BIT(8192),
    "exited" BIT(8192),
    "members" BIT(8192),

    CONSTRAINT "membership_record_pkey" PRIMARY KEY ("workspace_id","audience_id","chunk","at","reason")
);

-- CreateIndex: an audience's rows in a span of time (who came and went).
CREATE INDEX "membership_record_workspace_id_audience_id_at_idx" ON "membership_record"("workspace_id", "audience_id", "at");

-- A row holds up to three 1 KB bit strings, mostly zeros when a write moved few members of the
-- chunk: compressed once a row passes 128 bytes rather than 2 KB, a write that moved one member
-- keeps what its chunk's members cost, not 3 KB. Kept in the row (MAIN), never moved out to the
-- TOAST table: a read of a chunk's bits then costs one fetch, not one per bit read (an instant's
-- page took 35 ms to read one chunk's 8,192 bits out of line).
ALTER TABLE "membership_record" SET (toast_tuple_target = 128);
ALTER TABLE "membership_record" ALTER COLUMN "entered" SET STORAGE MAIN,
    ALTER COLUMN "exited" SET STORAGE MAIN, ALTER COLUMN "members" SET STORAGE MAIN;

-- The record kept so far, one row per member and write, folded into chunks: per (audience, chunk,
-- instant, reason) who entered and who left, and the chunk's members after that instant (those
-- whose last transition at or before it entered). Compacted rows (a member's last entry before
-- the horizon) become rows of their own, as compaction keeps them.
WITH t AS (
    SELECT x.*, x."seq" >> 13 AS "chunk",
        lead(x."at") OVER (PARTITION BY x."workspace_id", x."audience_id", x."seq" ORDER BY x."at") AS "until"
    FROM "membership_transitions" AS x
),
flips AS (
    SELECT t."workspace_id", t."audience_id", t."chunk", t."at", t."reason",
        bit_or(set_bit(B'0'::bit(8192), t."seq" & 8191, 1)) FILTER (WHERE t."entered") AS "entered",
        bit_or(set_bit(B'0'::bit(8192), t."seq" & 8191, 1)) FILTER (WHERE NOT t."entered") AS "exited"
    FROM t GROUP BY t."workspace_id", t."audience_id", t."chunk", t."at", t."reason"
),
points AS (SELECT DISTINCT "workspace_id", "audience_id", "chunk", "at" FROM t),
after AS (
    SELECT p."workspace_id", p."audience_id", p."chunk", p."at",
        bit_or(set_bit(B'0'::bit(8192), t."seq" & 8191, 1)) AS "members"
    FROM points AS p
    JOIN t ON t."workspace_id" = p."workspace_id" AND t."audience_id" = p."audience_id" AND t."chunk" = p."chunk"
        AND t."entered" AND t."at" <= p."at" AND (t."until" IS NULL OR t."until" > p."at")
    GROUP BY p."workspace_id", p."audience_id", p."chunk", p."at"
)
INSERT INTO "membership_record" ("workspace_id", "audience_id", "chunk", "at", "reason", "entered", "exited", "members")
SELECT f."workspace_id", f."audience_id", f."chunk", f."at", f."reason", f."entered", f."exited",
    coalesce(a."members", B'0'::bit(8192))
FROM flips AS f
LEFT JOIN after AS a ON a."workspace_id" = f."workspace_id" AND a."audience_id" = f."audience_id"
    AND a."chunk" = f."chunk" AND a."at" = f."at";

DROP TABLE "membership_transitions";
