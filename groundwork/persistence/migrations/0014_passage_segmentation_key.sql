-- A passage belongs to the segmentation that cut it: one foreign key to `corpus_segmentations` (version,
-- segmenter version) replaces the two to the version and to the segmenter version. That segmentation row
-- is itself keyed to both (and cascades from the version), so a passage can no longer exist without the
-- record of its cut, deleting a version still takes its passages with it, and a stored passage costs
-- PostgreSQL one key check instead of two (measured: storing 40,000 passages 0.90–1.07 → 0.69–0.76 s of
-- PostgreSQL CPU, see bench/README.md). The key is checked against the rows already there before the old
-- ones go.
ALTER TABLE corpus_passages
    ADD CONSTRAINT corpus_passages_segmentation_fkey FOREIGN KEY (source_version_id, segmenter_id)
        REFERENCES corpus_segmentations (source_version_id, segmenter_id) ON DELETE CASCADE NOT VALID;
ALTER TABLE corpus_passages VALIDATE CONSTRAINT corpus_passages_segmentation_fkey;
ALTER TABLE corpus_passages DROP CONSTRAINT IF EXISTS corpus_passages_source_version_id_fkey;
ALTER TABLE corpus_passages DROP CONSTRAINT IF EXISTS corpus_passages_segmenter_id_fkey;
