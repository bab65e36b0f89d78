-- Drafts weigh a work item's words by their rarity in the project's corpus (issue 35): a run stores, with its
-- evidence, how many of the project's passages hold each word the item asks with. Runs gathered before keep
-- NULL and are drafted as they were (rarity among their gathered passages).
ALTER TABLE enhancement_run_evidence ADD COLUMN rarity jsonb;
