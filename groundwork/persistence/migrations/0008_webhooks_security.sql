-- Webhooks and security hardening: who may receive an event, retention, sealed secrets.

-- The project an event is about (NULL: none), and the one principal who may see it when it is
-- personal (a notification's recipient). The relay delivers an event only to endpoints whose owner
-- may see it, judged when it dispatches.
ALTER TABLE outbox ADD COLUMN project_id text, ADD COLUMN private_to text;

-- Events still waiting for the relay get their audience from the resource they are about.
UPDATE outbox o SET project_id = r.project_id FROM enhancement_runs r
    WHERE o.dispatched_at IS NULL AND o.resource_type = 'work_item_enhancement_run' AND r.id = o.resource_id;
UPDATE outbox o SET project_id = c.project_id FROM context_contributions c
    WHERE o.dispatched_at IS NULL AND o.resource_type = 'context_engine_evolution' AND c.id = o.resource_id;
UPDATE outbox o SET project_id = e.project_id FROM context_entries e
    WHERE o.dispatched_at IS NULL AND o.resource_type = 'context_engine_evolution' AND e.id = o.resource_id;
UPDATE outbox o SET private_to = n.recipient_id FROM notifications n
    WHERE o.dispatched_at IS NULL AND o.resource_type = 'notification' AND n.id = o.resource_id;

-- Retention (the worker's purge schedule) deletes by age.
CREATE INDEX outbox_dispatched_idx ON outbox (dispatched_at) WHERE dispatched_at IS NOT NULL;
CREATE INDEX webhook_deliveries_completed_idx ON webhook_deliveries (completed_at) WHERE status <> 'pending';
CREATE INDEX webhook_delivery_attempts_age_idx ON webhook_delivery_attempts (attempted_at);
-- Non-admin principals manage the endpoints they created.
CREATE INDEX webhook_endpoints_owner_idx ON webhook_endpoints (workspace_id, created_by, id DESC);

-- Signing secrets are stored sealed (AES-GCM under GROUNDWORK_SECRET_KEY, `gwsealed1:...`) in
-- `secret`, `previous_secret` and `older_secrets[].secret`. Rows written before this migration hold
-- `whsec_...` as issued: `groundwork migrate` and every worker start seal them (SQL cannot encrypt).
COMMENT ON COLUMN webhook_endpoints.secret IS 'sealed signing secret (gwsealed1:...); whsec_... only before sealing';

-- An idempotency record whose answer holds a secret (create endpoint, rotate secret) keeps it sealed.
ALTER TABLE idempotency_keys ADD COLUMN response_sealed boolean NOT NULL DEFAULT false;

-- Contributing to a project's corpus and context (the internal provider API) is writing the project:
-- leads and contributors may, viewers and guests may not (workspace admins hold every permission).
UPDATE roles SET permissions = array_append(permissions, 'context:write')
    WHERE name IN ('lead', 'contributor') AND NOT 'context:write' = ANY(permissions);
