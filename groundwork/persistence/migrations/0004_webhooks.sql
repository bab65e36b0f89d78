-- Webhooks: endpoints, one delivery per (event, endpoint), and every attempt of every delivery.

CREATE TABLE webhook_endpoints (
    id                          text PRIMARY KEY,
    workspace_id                text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    url                         text NOT NULL,
    description                 text NOT NULL DEFAULT '',
    event_types                 text[] NOT NULL,
    -- The signing key has to be usable, so it is stored as issued; it is shown to callers only once.
    secret                      text NOT NULL,
    previous_secret             text,
    previous_secret_expires_at  timestamptz,
    -- Secrets replaced before `previous_secret` that are still inside their own overlap:
    -- [{"secret": ..., "expires_at": ...}], so rotating twice in 24 h never cuts one short.
    older_secrets               jsonb NOT NULL DEFAULT '[]'::jsonb,
    enabled                     boolean NOT NULL DEFAULT true,
    disabled_reason             text CHECK (disabled_reason IN ('manual', 'gone', 'failing')),
    disabled_at                 timestamptz,
    -- The first failed attempt since the last success; the endpoint is disabled when it gets too old.
    failing_since               timestamptz,
    consecutive_failures        integer NOT NULL DEFAULT 0,
    created_by                  text,
    created_at                  timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at                  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_endpoints_workspace_idx ON webhook_endpoints (workspace_id, id DESC);

CREATE TABLE webhook_deliveries (
    id                   text PRIMARY KEY,
    workflow_id          text NOT NULL UNIQUE,
    workspace_id         text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    endpoint_id          text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    event_id             text NOT NULL REFERENCES outbox(event_id) ON DELETE CASCADE,
    event_type           text NOT NULL,
    status               text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    failure_reason       text CHECK (failure_reason IN ('exhausted', 'endpoint_gone', 'endpoint_disabled')),
    -- 0 for the first delivery, bumped by every redelivery; a workflow of an older generation stops.
    generation           integer NOT NULL DEFAULT 0,
    attempt_count        integer NOT NULL DEFAULT 0,
    last_status_code     integer,
    last_attempt_at      timestamptz,
    next_attempt_at      timestamptz,
    -- A delivery whose workflow is not known to be started is started again by the relay's sweep.
    start_requested_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    workflow_started_at  timestamptz,
    workflow_run_id      text,
    completed_at         timestamptz,
    created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id DESC);
CREATE INDEX webhook_deliveries_unstarted_idx ON webhook_deliveries (start_requested_at)
    WHERE workflow_started_at IS NULL;

CREATE TABLE webhook_delivery_attempts (
    id                   bigserial PRIMARY KEY,
    delivery_id          text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    generation           integer NOT NULL,
    slot                 integer NOT NULL,         -- position in the retry schedule
    number               integer NOT NULL,         -- 1-based over the delivery's whole history
    attempted_at         timestamptz NOT NULL,
    status_code          integer,
    latency_ms           double precision NOT NULL,
    response_body        text,
    response_truncated   boolean NOT NULL DEFAULT false,
    error                text,
    outcome              text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
    retry_after_seconds  double precision,
    UNIQUE (delivery_id, generation, slot)
);
CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id, id);
