-- Reading a run reuses its row from memory while nothing it shows has changed (services/heard_runs.py):
-- each listening process drops a run's row when told `run:<id>` (the run row changed; every change of its
-- actions, drafts or artifacts bumps it in the same transaction) or `work_item:<id>` (a target's key,
-- title or version, which the run row carries, changed). Identical payloads within one transaction are
-- delivered once.
CREATE FUNCTION groundwork_row_cache_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('groundwork_cache', TG_ARGV[0] || ':' || OLD.id);
    RETURN NULL;
END;
$$;

CREATE TRIGGER enhancement_runs_cache AFTER UPDATE OR DELETE ON enhancement_runs
    FOR EACH ROW EXECUTE FUNCTION groundwork_row_cache_notify('run');
CREATE TRIGGER work_items_cache_update AFTER UPDATE OF key, title, version ON work_items
    FOR EACH ROW EXECUTE FUNCTION groundwork_row_cache_notify('work_item');
CREATE TRIGGER work_items_cache_delete AFTER DELETE ON work_items
    FOR EACH ROW EXECUTE FUNCTION groundwork_row_cache_notify('work_item');
