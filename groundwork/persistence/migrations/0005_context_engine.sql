-- Context engine: providers, governed contributions, entries ("context packages") with their evidence,
-- the change log the package index follows, internal provider principals, and corpus source classes.

-- Providers act through keys of the internal `provider` principal kind; customer keys never reach /internal.
ALTER TABLE principals DROP CONSTRAINT principals_kind_check;
ALTER TABLE principals ADD CONSTRAINT principals_kind_check
    CHECK (kind IN ('user', 'service', 'agent', 'provider'));

-- Financial and staffing sources (and their passages) exist only for keys holding that scope.
ALTER TABLE corpus_sources ADD COLUMN classification text NOT NULL DEFAULT 'general'
    CHECK (classification IN ('general', 'financial', 'staffing'));

CREATE TABLE context_providers (
    id              text PRIMARY KEY,                     -- prov_<ULID>
    workspace_id    text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name            text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    classification  text NOT NULL CHECK (classification IN ('delivery', 'corpus', 'work_items', 'financial', 'staffing')),
    capabilities    text[] NOT NULL,
    authority       text NOT NULL CHECK (authority IN ('advisory', 'canonical')),
    builtin         boolean NOT NULL DEFAULT false,
    registered_by   text,                                 -- the provider principal; null for built-ins
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (workspace_id, name)
);

-- Entries are written only by the governed commit path. `pending` entries exist between the merge
-- decision and its application and are never shown; `stale` is computed at read time from `as_of`.
CREATE TABLE context_entries (
    id                 text PRIMARY KEY,                  -- pkg_<ULID>
    seq                bigint GENERATED ALWAYS AS IDENTITY UNIQUE,  -- the entry's key in the package index
    workspace_id       text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id         text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    term               text NOT NULL,
    term_key           text NOT NULL,                     -- normalised term: what merges match on
    summary            text NOT NULL,
    contribution_type  text NOT NULL CHECK (contribution_type IN ('finding', 'risk', 'blocker', 'decision', 'dependency', 'milestone')),
    classification     text NOT NULL CHECK (classification IN ('general', 'financial', 'staffing')),
    authority          text NOT NULL CHECK (authority IN ('advisory', 'canonical')),
    status             text NOT NULL CHECK (status IN ('pending', 'ready', 'superseded')),
    provider_id        text NOT NULL REFERENCES context_providers(id),
    promoter_identity  text NOT NULL,
    generated_at       timestamptz NOT NULL,
    as_of              timestamptz NOT NULL,             -- the newest evidence time
    evidence_count     integer NOT NULL DEFAULT 0,
    provider_ids       text[] NOT NULL DEFAULT '{}',     -- providers with evidence on it, sorted
    supersedes         text REFERENCES context_entries(id),
    superseded_by      text REFERENCES context_entries(id),
    created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    superseded_at      timestamptz
);
CREATE INDEX context_entries_term_idx ON context_entries (project_id, term_key) WHERE status IN ('pending', 'ready');
CREATE INDEX context_entries_project_idx ON context_entries (project_id, id DESC);
CREATE INDEX context_entries_workspace_idx ON context_entries (workspace_id, id DESC);

-- Each contribution once: its id is `ctxc_<provider>_<fingerprint>`, also its workflow id.
CREATE TABLE context_contributions (
    id                   text PRIMARY KEY,
    workspace_id         text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    provider_id          text NOT NULL REFERENCES context_providers(id) ON DELETE CASCADE,
    project_id           text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    fingerprint          text NOT NULL,
    content_fingerprint  text NOT NULL,                  -- the fingerprint without `supersedes`
    body                 jsonb NOT NULL,                 -- the canonical contribution
    term_key             text NOT NULL,
    contribution_type    text NOT NULL,
    classification       text NOT NULL CHECK (classification IN ('general', 'financial', 'staffing')),
    promoter_identity    text NOT NULL,
    generated_at         timestamptz NOT NULL,
    state                text NOT NULL CHECK (state IN ('persisted', 'decided', 'applied')),
    decision             text CHECK (decision IN ('created', 'merged', 'kept_separate', 'superseded')),
    entry_id             text REFERENCES context_entries(id) ON DELETE SET NULL,
    related_entry_id     text,
    received_by          text,
    created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    decided_at           timestamptz,
    applied_at           timestamptz,
    UNIQUE (provider_id, fingerprint)
);
CREATE INDEX context_contributions_key_idx
    ON context_contributions (provider_id, project_id, term_key, contribution_type, classification, created_at DESC);
CREATE INDEX context_contributions_project_idx ON context_contributions (project_id, provider_id);
CREATE INDEX context_contributions_entry_idx ON context_contributions (entry_id);

-- Policy-safe evidence references: what they point at, never a body or an excerpt.
CREATE TABLE context_evidence (
    id               text PRIMARY KEY,                   -- ev_<ULID>
    seq              bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    entry_id         text NOT NULL REFERENCES context_entries(id) ON DELETE CASCADE,
    contribution_id  text NOT NULL REFERENCES context_contributions(id) ON DELETE CASCADE,
    provider_id      text NOT NULL REFERENCES context_providers(id) ON DELETE CASCADE,
    capability       text NOT NULL,
    reference_kind   text NOT NULL CHECK (reference_kind IN ('passage', 'work_item', 'work_item_history', 'external')),
    reference_id     text NOT NULL,
    reference_class  text NOT NULL CHECK (reference_class IN ('general', 'financial', 'staffing')),
    as_of            timestamptz NOT NULL,
    UNIQUE (entry_id, contribution_id, capability, reference_kind, reference_id)
);
CREATE INDEX context_evidence_entry_idx ON context_evidence (entry_id, seq DESC);

-- The package index follows this log in order, like the corpus index follows corpus_index_log.
CREATE TABLE context_entry_index_log (
    seq         bigserial PRIMARY KEY,
    entry_ids   text[] NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION context_entry_index_log_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('groundwork_package_index', '');
    RETURN NULL;
END;
$$;
CREATE TRIGGER context_entry_index_log_notify_after_insert AFTER INSERT ON context_entry_index_log
    FOR EACH STATEMENT EXECUTE FUNCTION context_entry_index_log_notify();
