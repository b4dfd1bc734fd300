-- The field catalogue (listFields) read every member's fields: 7.5–8.1 s at 1,000,000 members with
-- six keys each, holding the embedded store's single connection that long. What it answers is now
-- kept beside the members, in the same statement as every insert, update and delete of members
-- (as member_search is), so a read is a few index probes and exact in any snapshot:
--   field_catalogue  per workspace and key, how many members hold a non-empty value, and
--                    values_bound (below);
--   field_values     per workspace, key and value (its first 100 characters), how many members
--                    hold it, for the key's smallest values only: every value at or below the
--                    key's values_bound, or every value when it has none. The catalogue's sample
--                    values are the smallest three, read through the primary key's order.
-- Keeping every value of every key doubled to tripled the cost of a bulk insert of members with
-- six keys (one of them unique per member), and made a bulk delete 15 times dearer: each value a
-- write touched was an upsert into an index of a million rows. With a bound, a value above it
-- costs a comparison, and the list per key stays between 3 and 200 values:
--   more than 200 after a write → the 100 smallest are kept and the bound drops to the 100th;
--   fewer than 3 with a bound (98 of the smallest values gone) → the 100 smallest are read
--   again from the members, once, for that key alone.
-- A value is cut to 100 characters so that an index entry stays far below PostgreSQL's limit (a
-- value may be 1,024 characters of up to four bytes each); values sharing those 100 characters
-- count as one. Only the triggers write these tables. Every key is workspace-first, like every
-- other table's.

CREATE TABLE "field_catalogue" (
  "workspace_id" TEXT COLLATE "C" NOT NULL,
  "key" TEXT COLLATE "C" NOT NULL,
  "member_count" INTEGER NOT NULL,
  "values_bound" TEXT COLLATE "C",
  CONSTRAINT "field_catalogue_pkey" PRIMARY KEY ("workspace_id", "key")
);

CREATE TABLE "field_values" (
  "workspace_id" TEXT COLLATE "C" NOT NULL,
  "key" TEXT COLLATE "C" NOT NULL,
  "value" TEXT COLLATE "C" NOT NULL,
  "member_count" INTEGER NOT NULL,
  CONSTRAINT "field_values_pkey" PRIMARY KEY ("workspace_id", "key", "value")
);

-- The existing members, counted once: every key's count, and its 100 smallest values with theirs.
CREATE TEMPORARY TABLE "held_values" AS
SELECT m."workspace_id", f."key", left(f."value", 100) AS "value", count(*)::int AS "member_count"
FROM "members" AS m CROSS JOIN LATERAL jsonb_each_text(m."fields") AS f("key", "value")
WHERE f."value" <> ''
GROUP BY 1, 2, 3;

CREATE TEMPORARY TABLE "ranked_values" AS
SELECT h.*, row_number() OVER (PARTITION BY h."workspace_id", h."key" ORDER BY h."value" COLLATE "C") AS "rank",
  count(*) OVER (PARTITION BY h."workspace_id", h."key") AS "distinct_values"
FROM "held_values" AS h;

INSERT INTO "field_values" ("workspace_id", "key", "value", "member_count")
SELECT "workspace_id", "key", "value", "member_count" FROM "ranked_values" WHERE "rank" <= 100;

INSERT INTO "field_catalogue" ("workspace_id", "key", "member_count", "values_bound")
SELECT "workspace_id", "key", sum("member_count")::int,
  max("value" COLLATE "C") FILTER (WHERE "rank" = 100 AND "distinct_values" > 100)
FROM "ranked_values" GROUP BY 1, 2;

DROP TABLE "held_values", "ranked_values";

-- Applies counted changes: per (workspace, key, value) the number of members that began (positive)
-- or stopped (negative) holding it, as four arrays of one length. Rows are upserted in key order,
-- so two statements never wait on each other's rows in a cycle; a count that reaches 0 is removed,
-- so a key nobody holds any more leaves the catalogue and a value nobody holds leaves the samples.
-- Only a key that gained a value row or lost one is checked against the list's limits.
CREATE FUNCTION "field_catalogue_apply"("ws" TEXT[], "keys" TEXT[], "vals" TEXT[], "deltas" INTEGER[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  gone_ws TEXT[]; gone_keys TEXT[]; gone_vals TEXT[]; gone_key_ws TEXT[]; gone_key_keys TEXT[];
  check_ws TEXT[]; check_keys TEXT[];
  r RECORD;
  listed INTEGER;
  bound TEXT;
BEGIN
  IF "ws" IS NULL THEN RETURN; END IF;
  WITH d AS (
    SELECT * FROM unnest("ws", "keys", "vals", "deltas") AS d("workspace_id", "key", "value", "delta")
  ), listed_changes AS (
    -- The bound as it was before this statement: a key new to the catalogue has none.
    SELECT d.* FROM d LEFT JOIN "field_catalogue" AS c ON c."workspace_id" = d."workspace_id" AND c."key" = d."key"
    WHERE c."values_bound" IS NULL OR d."value" COLLATE "C" <= c."values_bound"
  ), v AS (
    INSERT INTO "field_values" AS t ("workspace_id", "key", "value", "member_count")
    SELECT "workspace_id", "key", "value", "delta" FROM listed_changes
    ORDER BY "workspace_id" COLLATE "C", "key" COLLATE "C", "value" COLLATE "C"
    ON CONFLICT ("workspace_id", "key", "value") DO UPDATE SET "member_count" = t."member_count" + EXCLUDED."member_count"
    RETURNING t."workspace_id", t."key", t."value", t."member_count", t.xmax = 0 AS "inserted"
  ), c AS (
    INSERT INTO "field_catalogue" AS t ("workspace_id", "key", "member_count")
    SELECT "workspace_id", "key", sum("delta")::int FROM d GROUP BY 1, 2 HAVING sum("delta") <> 0
    ORDER BY "workspace_id" COLLATE "C", "key" COLLATE "C"
    ON CONFLICT ("workspace_id", "key") DO UPDATE SET "member_count" = t."member_count" + EXCLUDED."member_count"
    RETURNING t."workspace_id", t."key", t."member_count"
  ), checked AS (
    SELECT DISTINCT "workspace_id", "key" FROM v WHERE "inserted" OR "member_count" = 0
  )
  -- Only the rows whose count reached 0 are looked up again, by primary key.
  SELECT (SELECT array_agg("workspace_id") FROM v WHERE "member_count" = 0),
         (SELECT array_agg("key") FROM v WHERE "member_count" = 0),
         (SELECT array_agg("value") FROM v WHERE "member_count" = 0),
         (SELECT array_agg("workspace_id") FROM c WHERE "member_count" = 0),
         (SELECT array_agg("key") FROM c WHERE "member_count" = 0),
         (SELECT array_agg("workspace_id") FROM checked),
         (SELECT array_agg("key") FROM checked)
  INTO gone_ws, gone_keys, gone_vals, gone_key_ws, gone_key_keys, check_ws, check_keys;
  IF gone_ws IS NOT NULL THEN
    DELETE FROM "field_values" AS t USING unnest(gone_ws, gone_keys, gone_vals) AS d("workspace_id", "key", "value")
    WHERE t."workspace_id" = d."workspace_id" AND t."key" = d."key" AND t."value" = d."value" AND t."member_count" = 0;
  END IF;
  IF gone_key_ws IS NOT NULL THEN
    DELETE FROM "field_catalogue" AS t USING unnest(gone_key_ws, gone_key_keys) AS d("workspace_id", "key")
    WHERE t."workspace_id" = d."workspace_id" AND t."key" = d."key" AND t."member_count" = 0;
  END IF;
  IF check_ws IS NULL THEN RETURN; END IF;
  FOR r IN
    SELECT c."workspace_id", c."key", c."values_bound" FROM "field_catalogue" AS c
    JOIN unnest(check_ws, check_keys) AS u("workspace_id", "key") ON c."workspace_id" = u."workspace_id" AND c."key" = u."key"
    ORDER BY 1, 2
  LOOP
    SELECT count(*) INTO listed FROM (SELECT 1 FROM "field_values" AS t
      WHERE t."workspace_id" = r."workspace_id" AND t."key" = r."key" LIMIT 201) AS l;
    IF listed > 200 THEN
      SELECT t."value" INTO bound FROM "field_values" AS t
      WHERE t."workspace_id" = r."workspace_id" AND t."key" = r."key" ORDER BY t."value" OFFSET 99 LIMIT 1;
      DELETE FROM "field_values" AS t WHERE t."workspace_id" = r."workspace_id" AND t."key" = r."key" AND t."value" > bound;
      UPDATE "field_catalogue" AS t SET "values_bound" = bound WHERE t."workspace_id" = r."workspace_id" AND t."key" = r."key";
    ELSIF listed < 3 AND r."values_bound" IS NOT NULL THEN
      DELETE FROM "field_values" AS t WHERE t."workspace_id" = r."workspace_id" AND t."key" = r."key";
      INSERT INTO "field_values" ("workspace_id", "key", "value", "member_count")
      SELECT r."workspace_id", r."key", s."value", s."member_count" FROM (
        SELECT left(m."fields"->>r."key", 100) COLLATE "C" AS "value", count(*)::int AS "member_count"
        FROM "members" AS m WHERE m."workspace_id" = r."workspace_id" AND m."fields"->>r."key" <> ''
        GROUP BY 1 ORDER BY 1 LIMIT 101) AS s;
      GET DIAGNOSTICS listed = ROW_COUNT;
      bound := NULL;
      IF listed > 100 THEN
        SELECT t."value" INTO bound FROM "field_values" AS t
        WHERE t."workspace_id" = r."workspace_id" AND t."key" = r."key" ORDER BY t."value" OFFSET 99 LIMIT 1;
        DELETE FROM "field_values" AS t WHERE t."workspace_id" = r."workspace_id" AND t."key" = r."key" AND t."value" > bound;
      END IF;
      UPDATE "field_catalogue" AS t SET "values_bound" = bound WHERE t."workspace_id" = r."workspace_id" AND t."key" = r."key";
    END IF;
  END LOOP;
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
