-- Foundation: tenancy, principals, projects, API keys, canonical work items, idempotency, outbox.

CREATE TABLE workspaces (
    id          text PRIMARY KEY,
    slug        text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE principals (
    id            text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name          text NOT NULL,
    display_name  text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('user', 'service', 'agent')),
    is_admin      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
);

CREATE TABLE portfolios (
    id            text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name          text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE engagements (
    id            text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    portfolio_id  text NOT NULL REFERENCES portfolios(id) ON DELETE CASCADE,
    name          text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX engagements_portfolio_idx ON engagements (portfolio_id);

CREATE TABLE projects (
    id                text PRIMARY KEY,
    workspace_id      text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    engagement_id     text NOT NULL REFERENCES engagements(id) ON DELETE CASCADE,
    key               text NOT NULL CHECK (key ~ '^[A-Z][A-Z0-9]{1,9}$'),
    name              text NOT NULL,
    next_item_number  integer NOT NULL DEFAULT 1,
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, key)
);
CREATE INDEX projects_engagement_idx ON projects (engagement_id);

-- A role grants a set of permissions on a project; memberships bind principals to projects by role.
CREATE TABLE roles (
    name         text PRIMARY KEY,
    permissions  text[] NOT NULL
);
INSERT INTO roles (name, permissions) VALUES
    ('lead',        ARRAY['project:read', 'work_items:write', 'context:read']),
    ('contributor', ARRAY['project:read', 'work_items:write', 'context:read']),
    ('viewer',      ARRAY['project:read', 'context:read']),
    ('guest',       ARRAY['project:read']);

CREATE TABLE memberships (
    id            bigserial PRIMARY KEY,
    principal_id  text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    project_id    text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    role          text NOT NULL REFERENCES roles(name),
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (principal_id, project_id)
);
CREATE INDEX memberships_project_idx ON memberships (project_id);

CREATE TABLE api_keys (
    id            text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    principal_id  text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    key_hash      text NOT NULL UNIQUE,          -- hex SHA-256 of the whole key; the key itself is never stored
    key_prefix    text NOT NULL,                 -- first characters, to recognise a key in listings
    scopes        text[] NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    revoked_at    timestamptz,
    last_used_at  timestamptz
);
CREATE INDEX api_keys_principal_idx ON api_keys (principal_id);

CREATE TABLE work_items (
    id            text PRIMARY KEY,
    workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id    text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key           text NOT NULL,
    title         text NOT NULL,
    status        text NOT NULL,
    sprint        text,
    watchers      text[] NOT NULL DEFAULT '{}',
    fields        jsonb NOT NULL DEFAULT '{}'::jsonb,
    version       timestamptz NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, key)
);
CREATE INDEX work_items_project_idx ON work_items (project_id, id DESC);
CREATE INDEX work_items_workspace_idx ON work_items (workspace_id, id DESC);

-- Every write to a work item, with who made it and through which door.
CREATE TABLE work_item_changes (
    id              bigserial PRIMARY KEY,
    work_item_id    text NOT NULL REFERENCES work_items(id) ON DELETE CASCADE,
    actor_id        text NOT NULL,
    source          text NOT NULL,
    changes         jsonb NOT NULL,
    version_before  timestamptz,
    version_after   timestamptz NOT NULL,
    changed_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX work_item_changes_item_idx ON work_item_changes (work_item_id, id);

-- Idempotency records, scoped by API key. A row without response_status is in flight.
CREATE TABLE idempotency_keys (
    id               bigserial PRIMARY KEY,
    api_key_id       text NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    key              text NOT NULL,
    fingerprint      text NOT NULL,
    locked_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    response_status  integer,
    response_headers jsonb,
    response_body    bytea,
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at       timestamptz NOT NULL,
    UNIQUE (api_key_id, key)
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);

-- Domain events, written in the same transaction as the change they describe.
CREATE TABLE outbox (
    id              bigserial PRIMARY KEY,
    event_id        text NOT NULL UNIQUE,
    type            text NOT NULL,
    event_version   integer NOT NULL DEFAULT 1,
    workspace_id    text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    resource_type   text NOT NULL,
    resource_id     text NOT NULL,
    actor_id        text,
    payload         jsonb NOT NULL,
    source          jsonb,
    occurred_at     timestamptz NOT NULL,
    dispatched_at   timestamptz
);
CREATE INDEX outbox_undispatched_idx ON outbox (id) WHERE dispatched_at IS NULL;
CREATE INDEX outbox_workspace_idx ON outbox (workspace_id, id);

-- Wake the relay at commit; the relay still sweeps, so a lost notification loses nothing.
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('groundwork_outbox', '');
    RETURN NULL;
END;
$$;
CREATE TRIGGER outbox_notify_after_insert AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
