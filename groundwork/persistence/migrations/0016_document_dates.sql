-- A source version records the date its document states about itself (a `Date:` line, HTML `<meta>` or a
-- marked `<time>`, PDF metadata, a dated title or file name) and which of these it came from; freshness is
-- measured from it, else from `ingested_at`. `document_date_source` is NULL for a version received before
-- this migration (never examined): receiving the same content again examines it, without a new version.
ALTER TABLE corpus_source_versions
    ADD COLUMN document_date timestamptz,
    ADD COLUMN document_date_source text CHECK (document_date_source IN (
        'date_line', 'html_meta', 'html_time', 'pdf_metadata', 'title', 'file_name', 'ingestion')),
    ADD CONSTRAINT corpus_source_versions_document_date_stated
        CHECK ((document_date IS NULL) = (document_date_source IS NULL OR document_date_source = 'ingestion'));
