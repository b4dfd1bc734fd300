-- A chunk of few members is stored as their positions, not as 8,192 bits.
--
-- PostgreSQL compresses nothing in a row under 2 kB, so a bit(8192) chunk costs ~1.1 kB in every
-- row version (and WAL record) however few members it holds: a write that changes one bit of a
-- sparse audience's chunk (a member's edit under many rules, a hand-picked list) wrote a kilobyte.
-- A chunk of at most 64 members now holds them in `seqs`, positions 0 … 8191 within the chunk, in
-- ascending order, with `bits` NULL; a fuller one keeps `bits` and has `seqs` NULL. Writers still
-- write whole bit strings: the trigger below chooses the form. Readers read
-- coalesce(bits, chunk_bits(seqs)) (src/features/membership/member-bits-sql.ts storedBits), so a
-- full chunk costs them nothing more. `count` stays the chunk's exact number of members, now set
-- by the trigger from the bits written.

-- A chunk's bits from its positions.
CREATE FUNCTION "chunk_bits"("seqs" SMALLINT[]) RETURNS BIT(8192) LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    b BIT(8192) := B'0'::BIT(8192);
    p SMALLINT;
BEGIN
    FOREACH p IN ARRAY seqs LOOP
        b := set_bit(b, p, 1);
    END LOOP;
    RETURN b;
END $$;

-- A chunk's positions from its bits: the text of the bits split at its ones leaves the runs of
-- zeros between them, whose lengths place each one (faster, for a few ones, than a search per
-- one or a walk over 128 words).
CREATE FUNCTION "chunk_seqs"("bits" BIT(8192)) RETURNS SMALLINT[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    runs TEXT[] := string_to_array(bits::TEXT, '1');
    seqs SMALLINT[] := '{}';
    p INTEGER := -1;
BEGIN
    FOR i IN 1 .. cardinality(runs) - 1 LOOP
        p := p + octet_length(runs[i]) + 1;
        seqs := seqs || p::SMALLINT;
    END LOOP;
    RETURN seqs;
END $$;

-- The form of a chunk as written, and its count: a writer sets `bits` (whole); a chunk of at most
-- 64 members is stored as their positions (the one declaration of that threshold). 64 positions
-- take 152 bytes; reading them back as bits costs about what reading a full chunk's row does.
CREATE FUNCTION "membership_chunk_form"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.bits IS NOT NULL THEN
        NEW.count := bit_count(NEW.bits);
        IF NEW.count <= 64 THEN
            NEW.seqs := chunk_seqs(NEW.bits);
            NEW.bits := NULL;
        ELSE
            NEW.seqs := NULL;
        END IF;
    END IF;
    RETURN NEW;
END $$;

-- AlterTable
ALTER TABLE "membership_chunks" ALTER COLUMN "bits" DROP NOT NULL,
ADD COLUMN "seqs" SMALLINT[],
ADD CONSTRAINT "membership_chunks_one_form" CHECK (("bits" IS NULL) <> ("seqs" IS NULL));

CREATE TRIGGER "membership_chunk_form" BEFORE INSERT OR UPDATE OF "bits" ON "membership_chunks"
FOR EACH ROW EXECUTE FUNCTION "membership_chunk_form"();

-- The chunks stored so far take the form their members call for.
UPDATE "membership_chunks" SET "bits" = "bits" WHERE "count" <= 64;
