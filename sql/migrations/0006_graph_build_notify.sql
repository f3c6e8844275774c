-- Readers that keep answers per graph build (the MCP server's caches) learn of a
-- change to graph_builds from a notification on channel kb_graph_builds instead
-- of asking on every call. NOTIFY is delivered when the writing transaction
-- commits, never for one that rolls back, so a listener that rereads the newest
-- complete build on each notification is never ahead of what readers can see.
CREATE FUNCTION graph_builds_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('kb_graph_builds', '');
    RETURN NULL;
END $$;

CREATE TRIGGER graph_builds_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON graph_builds FOR EACH STATEMENT EXECUTE FUNCTION graph_builds_notify();
