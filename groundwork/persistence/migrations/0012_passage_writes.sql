-- Storing a source's passages costs less (measured: the PostgreSQL part of an ingest 8.0 → 5.9 s for
-- 200,000 passages, see bench/README.md):
--
-- 1. A passage's workspace, project and source are copies of its source version's, written with it; their
--    foreign keys checked three more rows per passage and added nothing: the version's own key cascades from
--    the workspace (workspace → project → source → version → passage) and the copies cannot disagree with it.
ALTER TABLE corpus_passages DROP CONSTRAINT IF EXISTS corpus_passages_workspace_id_fkey;
ALTER TABLE corpus_passages DROP CONSTRAINT IF EXISTS corpus_passages_project_id_fkey;
ALTER TABLE corpus_passages DROP CONSTRAINT IF EXISTS corpus_passages_source_id_fkey;
-- 2. A version's text (the whole extracted document, kept to cut it again) is stored out of line without
--    compression: this PostgreSQL build offers only pglz, whose compression of a large text cost more than
--    the rest of storing the version. Versions stored before keep their compressed form.
ALTER TABLE corpus_source_versions ALTER COLUMN text SET STORAGE EXTERNAL;
