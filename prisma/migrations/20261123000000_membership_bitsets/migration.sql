-- Membership as bitsets of member numbers, instead of one row per (audience, member).
--
-- Every member gets a number (seq) in its workspace, handed out in (created_at, id) order, so
-- that number order is listing order. An audience's members, manual includes and excludes, and
-- the members its rule matches are each a set of numbers, stored as chunks of 8,192 bits (one
-- row per audience, kind and chunk). A merge of two 500,000-member audiences is then an OR of a
-- few hundred rows instead of 750,000 row inserts, and a rule change writes its result as a few
-- hundred rows too.

-- AlterTable: the workspace hands out member numbers and creation times under its row lock.
ALTER TABLE "workspaces" ADD COLUMN "member_seq" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "member_clock" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "members" ADD COLUMN "seq" INTEGER;

UPDATE "members" AS m SET "seq" = n."seq"
FROM (
    SELECT "workspace_id", "id", (row_number() OVER (PARTITION BY "workspace_id" ORDER BY "created_at", "id") - 1)::int AS "seq"
    FROM "members"
) AS n
WHERE m."workspace_id" = n."workspace_id" AND m."id" = n."id";

ALTER TABLE "members" ALTER COLUMN "seq" SET NOT NULL;

UPDATE "workspaces" AS w SET "member_seq" = s."count", "member_clock" = s."last"
FROM (SELECT "workspace_id", count(*)::int AS "count", max("created_at") AS "last" FROM "members" GROUP BY "workspace_id") AS s
WHERE w."workspace_id" = s."workspace_id";

-- AlterTable: set by this upgrade on rule-based audiences, whose matches the service computes
-- again at its next start (the rule is evaluated by the service, not in SQL).
ALTER TABLE "audiences" ADD COLUMN "rule_outdated" BOOLEAN NOT NULL DEFAULT false;

-- CreateEnum
CREATE TYPE "membership_kind" AS ENUM ('member', 'include', 'exclude', 'match');

-- CreateTable
CREATE TABLE "membership_chunks" (
    "workspace_id" TEXT COLLATE "C" NOT NULL,
    "audience_id" TEXT COLLATE "C" NOT NULL,
    "kind" "membership_kind" NOT NULL,
    "chunk" INTEGER NOT NULL,
    "bits" BIT(8192) NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "membership_chunks_pkey" PRIMARY KEY ("workspace_id","audience_id","kind","chunk")
);

-- CreateIndex
CREATE UNIQUE INDEX "members_workspace_id_seq_key" ON "members"("workspace_id", "seq");

-- AddForeignKey
ALTER TABLE "membership_chunks" ADD CONSTRAINT "membership_chunks_workspace_id_audience_id_fkey" FOREIGN KEY ("workspace_id", "audience_id") REFERENCES "audiences"("workspace_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The stored membership, as bitsets: includes and excludes from the manual entries, members from
-- the materialized rows, and as rule matches the members that belong without an include (the
-- rest of the matches is computed at the next start, see rule_outdated).
INSERT INTO "membership_chunks" ("workspace_id", "audience_id", "kind", "chunk", "bits", "count")
SELECT "workspace_id", "audience_id", "kind", "chunk", "bits", bit_count("bits")::int
FROM (
    WITH positions AS (
        SELECT e."workspace_id", e."audience_id", e."kind"::text::"membership_kind" AS "kind", m."seq"
        FROM "audience_entries" AS e
        JOIN "members" AS m ON m."workspace_id" = e."workspace_id" AND m."id" = e."member_id"
        UNION ALL
        SELECT am."workspace_id", am."audience_id", 'member', m."seq"
        FROM "audience_members" AS am
        JOIN "members" AS m ON m."workspace_id" = am."workspace_id" AND m."id" = am."member_id"
        UNION ALL
        SELECT am."workspace_id", am."audience_id", 'match', m."seq"
        FROM "audience_members" AS am
        JOIN "members" AS m ON m."workspace_id" = am."workspace_id" AND m."id" = am."member_id"
        LEFT JOIN "audience_entries" AS e
            ON e."workspace_id" = am."workspace_id" AND e."audience_id" = am."audience_id" AND e."member_id" = am."member_id"
        WHERE e."kind" IS NULL
    ), words AS (
        SELECT "workspace_id", "audience_id", "kind", "seq" >> 6 AS "word", bit_or(1::int8 << (63 - ("seq" & 63))) AS "bits"
        FROM positions GROUP BY 1, 2, 3, 4
    ), chunks AS (
        SELECT DISTINCT "workspace_id", "audience_id", "kind", "word" >> 7 AS "chunk" FROM words
    )
    SELECT c."workspace_id", c."audience_id", c."kind", c."chunk",
           ('x' || string_agg(lpad(to_hex(coalesce(w."bits", 0)), 16, '0'), '' ORDER BY g.k))::bit(8192) AS "bits"
    FROM chunks AS c
    CROSS JOIN generate_series(0, 127) AS g(k)
    LEFT JOIN words AS w
        ON w."workspace_id" = c."workspace_id" AND w."audience_id" = c."audience_id" AND w."kind" = c."kind"
        AND w."word" = c."chunk" * 128 + g.k
    GROUP BY 1, 2, 3, 4
) AS converted;

UPDATE "audiences" SET "rule_outdated" = true WHERE "filter" IS NOT NULL;

-- DropTable
DROP TABLE "audience_entries";

-- DropTable
DROP TABLE "audience_members";

-- DropEnum
DROP TYPE "entry_kind";
