-- A common search term's totalCount rechecked every trigram candidate in the members table: at
-- 1,000,000 members, 111,000 rows of about 400 bytes each (their data twice, as given and folded),
-- each one's five values extracted from JSON again. The searched text now lives in a narrow table
-- of its own, one row per member (its number and the values one per line), with the trigram index
-- on it: the count reads a quarter of the pages and tests a plain text column. The triggers keep it
-- in step with members in the same statement, so a count over it is exact in any snapshot.

CREATE TABLE "member_search" (
  "workspace_id" TEXT COLLATE "C" NOT NULL,
  "seq" INTEGER NOT NULL,
  "searched" TEXT NOT NULL,
  CONSTRAINT "member_search_pkey" PRIMARY KEY ("workspace_id", "seq")
);

-- What search looks in, written once: the folded e-mail and four fields, one per line (no value
-- is matched across a line break: src/features/membership/member-page-repo.ts).
CREATE FUNCTION "member_searched_text"("folded" JSONB) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce("folded"->>'email', '') || E'\n' ||
    coalesce("folded"->'fields'->>'firstName', '') || E'\n' ||
    coalesce("folded"->'fields'->>'lastName', '') || E'\n' ||
    coalesce("folded"->'fields'->>'role', '') || E'\n' ||
    coalesce("folded"->'fields'->>'company', '')
$$;

INSERT INTO "member_search" ("workspace_id", "seq", "searched")
SELECT "workspace_id", "seq", "member_searched_text"("folded") FROM "members";

CREATE INDEX "member_search_trgm" ON "member_search" USING gin ("searched" gin_trgm_ops);

-- The members' index is replaced by member_search's: an update of a member's data no longer
-- changes an index of members for it.
DROP INDEX "members_search_trgm";

-- Statement triggers with transition tables: a bulk insert of 10,000 members is one INSERT … SELECT
-- here, not 10,000 calls. An update rewrites only the rows whose text changed; a member's number
-- never changes, but a row of the old numbers is removed all the same if one did.
CREATE FUNCTION "member_search_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "member_search" ("workspace_id", "seq", "searched")
  SELECT n."workspace_id", n."seq", "member_searched_text"(n."folded") FROM "new_members" AS n;
  RETURN NULL;
END
$$;

CREATE FUNCTION "member_search_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "member_search" AS s USING "old_members" AS o
  WHERE s."workspace_id" = o."workspace_id" AND s."seq" = o."seq"
    AND NOT EXISTS (SELECT 1 FROM "new_members" AS n WHERE n."workspace_id" = o."workspace_id" AND n."seq" = o."seq");
  INSERT INTO "member_search" AS s ("workspace_id", "seq", "searched")
  SELECT n."workspace_id", n."seq", "member_searched_text"(n."folded") FROM "new_members" AS n
  ON CONFLICT ("workspace_id", "seq") DO UPDATE SET "searched" = EXCLUDED."searched"
  WHERE s."searched" IS DISTINCT FROM EXCLUDED."searched";
  RETURN NULL;
END
$$;

CREATE FUNCTION "member_search_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "member_search" AS s USING "old_members" AS o
  WHERE s."workspace_id" = o."workspace_id" AND s."seq" = o."seq";
  RETURN NULL;
END
$$;

CREATE TRIGGER "members_search_insert" AFTER INSERT ON "members"
  REFERENCING NEW TABLE AS "new_members" FOR EACH STATEMENT EXECUTE FUNCTION "member_search_inserted"();
CREATE TRIGGER "members_search_update" AFTER UPDATE ON "members"
  REFERENCING OLD TABLE AS "old_members" NEW TABLE AS "new_members" FOR EACH STATEMENT EXECUTE FUNCTION "member_search_updated"();
CREATE TRIGGER "members_search_delete" AFTER DELETE ON "members"
  REFERENCING OLD TABLE AS "old_members" FOR EACH STATEMENT EXECUTE FUNCTION "member_search_deleted"();
