-- The field catalogue (listFields) read every member's fields: 7.5–8.1 s at 1,000,000 members with
-- six keys each, holding the embedded store's single connection that long. What it answers is now
-- kept beside the members, in the same statement as every insert, update and delete of members
-- (as member_search is), so a read is a few index probes and exact in any snapshot:
--   field_catalogue  per workspace and key, how many members hold a non-empty value;
--   field_values     per workspace, key and value (its first 100 characters), how many members
--                    hold it: the catalogue's sample values are the smallest of these, read
--                    through the primary key's order. A value is cut to 100 characters so that
--                    an index entry stays far below PostgreSQL's limit (a value may be 1,024
--                    characters of up to four bytes each); values sharing those 100 characters
--                    count as one.
-- Only the triggers write them. Every key is workspace-first, like every other table's.

CREATE TABLE "field_catalogue" (
  "workspace_id" TEXT COLLATE "C" NOT NULL,
  "key" TEXT COLLATE "C" NOT NULL,
  "member_count" INTEGER NOT NULL,
  CONSTRAINT "field_catalogue_pkey" PRIMARY KEY ("workspace_id", "key")
);

CREATE TABLE "field_values" (
  "workspace_id" TEXT COLLATE "C" NOT NULL,
  "key" TEXT COLLATE "C" NOT NULL,
  "value" TEXT COLLATE "C" NOT NULL,
  "member_count" INTEGER NOT NULL,
  CONSTRAINT "field_values_pkey" PRIMARY KEY ("workspace_id", "key", "value")
);

-- The existing members, counted once.
INSERT INTO "field_values" ("workspace_id", "key", "value", "member_count")
SELECT m."workspace_id", f."key", left(f."value", 100), count(*)::int
FROM "members" AS m CROSS JOIN LATERAL jsonb_each_text(m."fields") AS f("key", "value")
WHERE f."value" <> ''
GROUP BY 1, 2, 3;

INSERT INTO "field_catalogue" ("workspace_id", "key", "member_count")
SELECT "workspace_id", "key", sum("member_count")::int FROM "field_values" GROUP BY 1, 2;

-- Applies counted changes: per (workspace, key, value) the number of members that began (positive)
-- or stopped (negative) holding it, as four arrays of one length. Rows are upserted in key order,
-- so two statements never wait on each other's rows in a cycle; a count that reaches 0 is removed,
-- so a key nobody holds any more leaves the catalogue and a value nobody holds leaves the samples.
CREATE FUNCTION "field_catalogue_apply"("ws" TEXT[], "keys" TEXT[], "vals" TEXT[], "deltas" INTEGER[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  emptied BOOLEAN;
BEGIN
  IF "ws" IS NULL THEN RETURN; END IF;
  WITH d AS (
    SELECT * FROM unnest("ws", "keys", "vals", "deltas") AS d("workspace_id", "key", "value", "delta")
  ), v AS (
    INSERT INTO "field_values" AS t ("workspace_id", "key", "value", "member_count")
    SELECT "workspace_id", "key", "value", "delta" FROM d ORDER BY 1, 2, 3
    ON CONFLICT ("workspace_id", "key", "value") DO UPDATE SET "member_count" = t."member_count" + EXCLUDED."member_count"
    RETURNING t."member_count"
  ), c AS (
    INSERT INTO "field_catalogue" AS t ("workspace_id", "key", "member_count")
    SELECT "workspace_id", "key", sum("delta")::int FROM d GROUP BY 1, 2 HAVING sum("delta") <> 0 ORDER BY 1, 2
    ON CONFLICT ("workspace_id", "key") DO UPDATE SET "member_count" = t."member_count" + EXCLUDED."member_count"
    RETURNING t."member_count"
  )
  SELECT EXISTS (SELECT 1 FROM v WHERE "member_count" = 0) OR EXISTS (SELECT 1 FROM c WHERE "member_count" = 0)
  INTO emptied;
  IF emptied THEN
    DELETE FROM "field_values" AS t USING unnest("ws", "keys", "vals") AS d("workspace_id", "key", "value")
    WHERE t."workspace_id" = d."workspace_id" AND t."key" = d."key" AND t."value" = d."value" AND t."member_count" = 0;
    DELETE FROM "field_catalogue" AS t USING unnest("ws", "keys") AS d("workspace_id", "key")
    WHERE t."workspace_id" = d."workspace_id" AND t."key" = d."key" AND t."member_count" = 0;
  END IF;
END
$$;

-- The catalogue's share of a member's fields: its non-empty values, cut as field_values keeps them.
CREATE FUNCTION "member_field_values"("fields" JSONB)
RETURNS TABLE ("key" TEXT, "value" TEXT) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT f."key", left(f."value", 100) FROM jsonb_each_text("fields") AS f("key", "value") WHERE f."value" <> ''
$$;

-- Statement triggers with transition tables, as member_search's: a bulk write of 10,000 members is
-- one grouped upsert here. An update counts only the members whose fields changed: each such
-- member's old values stop counting and its new ones start.
CREATE FUNCTION "field_catalogue_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ws TEXT[]; keys TEXT[]; vals TEXT[]; deltas INTEGER[];
BEGIN
  SELECT array_agg(d."workspace_id"), array_agg(d."key"), array_agg(d."value"), array_agg(d."delta")
  INTO ws, keys, vals, deltas
  FROM (SELECT n."workspace_id", f."key", f."value", count(*)::int AS "delta"
        FROM "new_members" AS n CROSS JOIN LATERAL "member_field_values"(n."fields") AS f
        GROUP BY 1, 2, 3) AS d;
  PERFORM "field_catalogue_apply"(ws, keys, vals, deltas);
  RETURN NULL;
END
$$;

CREATE FUNCTION "field_catalogue_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ws TEXT[]; keys TEXT[]; vals TEXT[]; deltas INTEGER[];
BEGIN
  SELECT array_agg(d."workspace_id"), array_agg(d."key"), array_agg(d."value"), array_agg(d."delta")
  INTO ws, keys, vals, deltas
  FROM (SELECT c."workspace_id", f."key", f."value", sum(c."sign")::int AS "delta"
        FROM (SELECT o."workspace_id", o."fields", -1 AS "sign" FROM "old_members" AS o
              WHERE NOT EXISTS (SELECT 1 FROM "new_members" AS n
                WHERE n."workspace_id" = o."workspace_id" AND n."id" = o."id" AND n."fields" = o."fields")
              UNION ALL
              SELECT n."workspace_id", n."fields", 1 FROM "new_members" AS n
              WHERE NOT EXISTS (SELECT 1 FROM "old_members" AS o
                WHERE o."workspace_id" = n."workspace_id" AND o."id" = n."id" AND o."fields" = n."fields")) AS c
        CROSS JOIN LATERAL "member_field_values"(c."fields") AS f
        GROUP BY 1, 2, 3 HAVING sum(c."sign") <> 0) AS d;
  PERFORM "field_catalogue_apply"(ws, keys, vals, deltas);
  RETURN NULL;
END
$$;

CREATE FUNCTION "field_catalogue_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ws TEXT[]; keys TEXT[]; vals TEXT[]; deltas INTEGER[];
BEGIN
  SELECT array_agg(d."workspace_id"), array_agg(d."key"), array_agg(d."value"), array_agg(d."delta")
  INTO ws, keys, vals, deltas
  FROM (SELECT o."workspace_id", f."key", f."value", -count(*)::int AS "delta"
        FROM "old_members" AS o CROSS JOIN LATERAL "member_field_values"(o."fields") AS f
        GROUP BY 1, 2, 3) AS d;
  PERFORM "field_catalogue_apply"(ws, keys, vals, deltas);
  RETURN NULL;
END
$$;

CREATE TRIGGER "members_catalogue_insert" AFTER INSERT ON "members"
  REFERENCING NEW TABLE AS "new_members" FOR EACH STATEMENT EXECUTE FUNCTION "field_catalogue_inserted"();
CREATE TRIGGER "members_catalogue_update" AFTER UPDATE ON "members"
  REFERENCING OLD TABLE AS "old_members" NEW TABLE AS "new_members" FOR EACH STATEMENT EXECUTE FUNCTION "field_catalogue_updated"();
CREATE TRIGGER "members_catalogue_delete" AFTER DELETE ON "members"
  REFERENCING OLD TABLE AS "old_members" FOR EACH STATEMENT EXECUTE FUNCTION "field_catalogue_deleted"();
