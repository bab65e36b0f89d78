-- Work item enhancement: runs, their actions, drafts, artifacts and apply history.

CREATE TABLE enhancement_runs (
    id                 text PRIMARY KEY,
    workspace_id       text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id         text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    target_id          text NOT NULL REFERENCES work_items(id) ON DELETE CASCADE,
    requested_actions  text[] NOT NULL,
    instructions       text NOT NULL DEFAULT '',
    state              text NOT NULL CHECK (state IN ('queued', 'running', 'ready_for_review', 'applied', 'failed', 'expired')),
    requested_by       text NOT NULL,
    code_context       boolean NOT NULL DEFAULT false,
    generator          text NOT NULL,
    error_code         text,
    error_message      text,
    review_expires_at  timestamptz,
    created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    completed_at       timestamptz
);
CREATE INDEX enhancement_runs_workspace_idx ON enhancement_runs (workspace_id, id DESC);
CREATE INDEX enhancement_runs_target_idx ON enhancement_runs (target_id);
CREATE INDEX enhancement_runs_queued_idx ON enhancement_runs (created_at) WHERE state = 'queued';

-- Every action a run was asked to perform, in order; the first ones come from the create request.
CREATE TABLE enhancement_run_actions (
    id            bigserial PRIMARY KEY,
    run_id        text NOT NULL REFERENCES enhancement_runs(id) ON DELETE CASCADE,
    request_id    text NOT NULL,
    action        text NOT NULL,
    instructions  text NOT NULL DEFAULT '',
    state         text NOT NULL CHECK (state IN ('pending', 'completed', 'failed')),
    error_code    text,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    completed_at  timestamptz,
    UNIQUE (run_id, request_id)
);

CREATE TABLE enhancement_drafts (
    id              text PRIMARY KEY,
    run_id          text NOT NULL REFERENCES enhancement_runs(id) ON DELETE CASCADE,
    run_action_id   bigint NOT NULL REFERENCES enhancement_run_actions(id) ON DELETE CASCADE,
    action          text NOT NULL,
    field           text NOT NULL,
    proposed_value  jsonb NOT NULL,
    confidence      double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    evidence_refs   jsonb NOT NULL,
    apply_id        text,
    applied_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX enhancement_drafts_run_idx ON enhancement_drafts (run_id, id DESC);

CREATE TABLE enhancement_artifacts (
    id              text PRIMARY KEY,
    run_id          text NOT NULL REFERENCES enhancement_runs(id) ON DELETE CASCADE,
    run_action_id   bigint NOT NULL REFERENCES enhancement_run_actions(id) ON DELETE CASCADE,
    action          text NOT NULL,
    type            text NOT NULL,
    title           text NOT NULL,
    summary         text NOT NULL,
    body            text NOT NULL,
    evidence_refs   jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX enhancement_artifacts_run_idx ON enhancement_artifacts (run_id, id DESC);

CREATE TABLE enhancement_applies (
    id                       text PRIMARY KEY,
    run_id                   text NOT NULL REFERENCES enhancement_runs(id) ON DELETE CASCADE,
    work_item_id             text NOT NULL REFERENCES work_items(id) ON DELETE CASCADE,
    draft_ids                text[] NOT NULL,
    expected_target_version  timestamptz NOT NULL,
    target_version           timestamptz NOT NULL,
    actor_id                 text NOT NULL,
    applied_at               timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX enhancement_applies_run_idx ON enhancement_applies (run_id);
