-- Adoption by a team (issue 33): keys that expire, archived projects, and work items imported from a tracker.

ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;

ALTER TABLE projects ADD COLUMN archived_at timestamptz;

-- Where an imported work item came from: {"kind": "github"|"jira", "externalId": "...", "url": "..."}.
ALTER TABLE work_items ADD COLUMN source jsonb;
-- One item per external entry and project: a re-import updates it, never duplicates it.
CREATE UNIQUE INDEX work_items_source_idx ON work_items (project_id, (source->>'kind'), (source->>'externalId'))
    WHERE source IS NOT NULL;

-- A large tracker import runs as a workflow: its file and maps, its status, its progress and its report so far.
CREATE TABLE work_item_imports (
    id          text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id  text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    actor_id    text NOT NULL,
    format      text NOT NULL CHECK (format IN ('github', 'jira')),
    content     text NOT NULL,
    status_map  jsonb NOT NULL DEFAULT '{}'::jsonb,
    people_map  jsonb NOT NULL DEFAULT '{}'::jsonb,
    status      text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    total       integer NOT NULL DEFAULT 0,
    processed   integer NOT NULL DEFAULT 0,
    report      jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX work_item_imports_project_idx ON work_item_imports (project_id, id DESC);
