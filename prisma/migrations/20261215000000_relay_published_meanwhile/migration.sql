-- Fails the relay's publishing statement (event-repo.ts publish) when some of the outbox it read
-- is gone: another relay published it after this one's entries were read (their snapshot may
-- predate that relay's commit). The statement is sent with its COMMIT on PostgreSQL and nobody
-- reads its answer, so the publishing cannot be told apart from a commit by a count it returns:
-- it fails instead, with a SQLSTATE of its own (class EV is none of PostgreSQL's), and the
-- transaction rolls back; the relay recognises the code and reads again.
CREATE FUNCTION "relay_published_meanwhile"() RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'outbox entries read by this relay were published meanwhile by another'
    USING ERRCODE = 'EV001';
END
$$;
