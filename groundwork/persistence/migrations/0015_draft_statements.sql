-- Each statement of a draft's proposed value with the evidence it was taken from and its relevance
-- (`[{text, relevance, evidenceRefs: [{kind, id}]}]`): the value itself carries no citation markup.
-- Drafts stored before this hold an empty list.
ALTER TABLE enhancement_drafts ADD COLUMN statements jsonb NOT NULL DEFAULT '[]'::jsonb;
