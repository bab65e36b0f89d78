-- What a state-changing request created, written in the transaction of the change: a retry of the same
-- request (same API key and Idempotency-Key) after the API died between that commit and the stored
-- answer finds it instead of creating a second one.
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS resource_type text;
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS resource_id text;
