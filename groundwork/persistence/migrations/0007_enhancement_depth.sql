-- Enhancement depth: the evidence a run gathers once and shares with all its actions, and a wake-up
-- for API calls waiting on a run.

-- What a run's actions draw on, gathered once when the run starts: evidence items ({kind, id, text,
-- label, section}, in the order gathered) and the estimate's reference class ({id, key, title,
-- estimate, text}: completed, estimated work items of the same project).
CREATE TABLE enhancement_run_evidence (
    run_id           text PRIMARY KEY REFERENCES enhancement_runs(id) ON DELETE CASCADE,
    items            jsonb NOT NULL,
    reference_items  jsonb NOT NULL DEFAULT '[]',
    gathered_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Every state change of a run wakes the API calls waiting on it (LISTEN groundwork_enhancement_run,
-- payload `<run id> <new state>`), so a create that waits for the finished run answers at the commit,
-- not at the next poll.
CREATE FUNCTION enhancement_run_state_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('groundwork_enhancement_run', NEW.id || ' ' || NEW.state);
    RETURN NULL;
END $$;
CREATE TRIGGER enhancement_run_state_notify_after_update AFTER UPDATE OF state ON enhancement_runs
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION enhancement_run_state_notify();

