-- The reviewer's loop (issue 38): apply history with each field's value before and after, rejected drafts,
-- and cancelled runs.

-- Each apply records, in its own transaction, what it changed field by field:
-- [{"field", "draft_id", "before", "after"}]. Applies recorded before this migration take theirs from the
-- work item's history row the same apply wrote (same item, source `apply`, same version after).
ALTER TABLE enhancement_applies ADD COLUMN changes jsonb NOT NULL DEFAULT '[]'::jsonb;
UPDATE enhancement_applies a
SET changes = coalesce((
    SELECT jsonb_agg(jsonb_build_object('field', e.key, 'draft_id', e.value->>'draft_id',
                                        'before', e.value->'from', 'after', e.value->'to') ORDER BY e.key)
    FROM work_item_changes c, jsonb_each(c.changes) e
    WHERE c.work_item_id = a.work_item_id AND c.source = 'apply' AND c.version_after = a.target_version
), '[]'::jsonb);
DROP INDEX enhancement_applies_run_idx;
CREATE INDEX enhancement_applies_run_idx ON enhancement_applies (run_id, applied_at, id);

-- A draft a reviewer rejected, with the reason and who did it when: it is never applied afterwards.
ALTER TABLE enhancement_drafts
    ADD COLUMN rejected_at timestamptz,
    ADD COLUMN rejected_by text,
    ADD COLUMN rejection_reason text;

-- A run a caller cancelled: its pending actions stopped, nothing can be applied.
ALTER TABLE enhancement_runs DROP CONSTRAINT enhancement_runs_state_check;
ALTER TABLE enhancement_runs ADD CONSTRAINT enhancement_runs_state_check
    CHECK (state IN ('queued', 'running', 'ready_for_review', 'applied', 'failed', 'expired', 'cancelled'));
