-- Every server process keeps recently read audiences in memory (GET …/audiences/:id). When an
-- audience's name changes or the audience is deleted, the database tells every process that
-- listens, at commit, so that none of them answers with what it remembered.
-- Payload: "<workspace_id> <audience_id>" (neither contains a space).
CREATE FUNCTION "audience_changed_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('audience_changed', OLD.workspace_id || ' ' || OLD.id);
  RETURN NULL;
END
$$;

CREATE TRIGGER "audiences_notify_rename"
  AFTER UPDATE OF "name" ON "audiences"
  FOR EACH ROW WHEN (OLD."name" IS DISTINCT FROM NEW."name")
  EXECUTE FUNCTION "audience_changed_notify"();

CREATE TRIGGER "audiences_notify_delete"
  AFTER DELETE ON "audiences"
  FOR EACH ROW EXECUTE FUNCTION "audience_changed_notify"();
