-- Adoption by a team (issue 33): keys that expire, archived projects, and work items imported from a tracker.

ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;

ALTER TABLE projects ADD COLUMN archived_at timestamptz;

-- Where an imported work item came from: {"kind": "github"|"jira", "externalId": "...", "url": "..."}.
ALTER TABLE work_items ADD COLUMN source jsonb;
-- One item per external entry and project: a re-import updates it, never duplicates it.
CREATE UNIQUE INDEX work_items_source_idx ON work_items (project_id, (source->>'kind'), (source->>'externalId'))
    WHERE source IS NOT NULL;
