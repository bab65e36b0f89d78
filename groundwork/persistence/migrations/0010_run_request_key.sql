-- A run created under an Idempotency-Key remembers the request it answers, so a retry after the API died
-- between the run's commit and the stored answer finds this run instead of creating a second one.
ALTER TABLE enhancement_runs ADD COLUMN IF NOT EXISTS request_key text;
CREATE UNIQUE INDEX IF NOT EXISTS enhancement_runs_request_key ON enhancement_runs (request_key)
    WHERE request_key IS NOT NULL;
