-- Evidence search corpus: sources, source-content versions, segmenter versions, passages, and the
-- change log the Tantivy index follows. PostgreSQL is the truth; the index is a projection of it.

-- A segmenter version turns a source version's text into passages. Exactly one is active; one more may
-- be staging while the corpus is re-segmented with it (its passages exist but never surface).
CREATE TABLE corpus_segmenters (
    id            text PRIMARY KEY,                       -- "<name>@<version>", e.g. paragraph@1
    name          text NOT NULL,
    version       integer NOT NULL CHECK (version > 0),
    active        boolean NOT NULL DEFAULT false,
    staging       boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    activated_at  timestamptz,
    retired_at    timestamptz,
    UNIQUE (name, version),
    CHECK (NOT (active AND staging))
);
CREATE UNIQUE INDEX corpus_segmenters_one_active ON corpus_segmenters ((true)) WHERE active;
CREATE UNIQUE INDEX corpus_segmenters_one_staging ON corpus_segmenters ((true)) WHERE staging;
INSERT INTO corpus_segmenters (id, name, version, active, activated_at)
    VALUES ('paragraph@1', 'paragraph', 1, true, now());

-- A source is identified within its project by its uri.
CREATE TABLE corpus_sources (
    id            text PRIMARY KEY,                       -- src_<ULID>
    workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id    text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    uri           text NOT NULL CHECK (length(uri) BETWEEN 1 AND 2048),
    title         text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('text', 'markdown', 'html', 'pdf')),
    owner         text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, uri)
);
CREATE INDEX corpus_sources_workspace_idx ON corpus_sources (workspace_id, project_id);

-- Each distinct content received for a source. `text` is the extracted text that passage spans point
-- into (for text and Markdown it is the file itself, newlines normalised).
CREATE TABLE corpus_source_versions (
    id              text PRIMARY KEY,                     -- srcv_<ULID>
    seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    source_id       text NOT NULL REFERENCES corpus_sources(id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('text', 'markdown', 'html', 'pdf')),
    content_hash    text NOT NULL,                        -- hex SHA-256 of the bytes received
    byte_size       bigint NOT NULL,
    title           text NOT NULL,
    text            text NOT NULL,
    provenance_quality text NOT NULL CHECK (provenance_quality IN ('exact_text', 'extracted', 'ocr')),
    status          text NOT NULL CHECK (status IN ('pending', 'active', 'inactive')),
    received_by     text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    ingested_at     timestamptz,                          -- when it became active
    deactivated_at  timestamptz
);
CREATE UNIQUE INDEX corpus_source_versions_one_active ON corpus_source_versions (source_id) WHERE status = 'active';
CREATE INDEX corpus_source_versions_source_idx ON corpus_source_versions (source_id, seq DESC);
CREATE INDEX corpus_source_versions_active_idx ON corpus_source_versions (seq) WHERE status = 'active';

-- Which segmenter versions have cut which source versions (zero passages is a valid outcome).
CREATE TABLE corpus_segmentations (
    id                 bigserial PRIMARY KEY,
    source_version_id  text NOT NULL REFERENCES corpus_source_versions(id) ON DELETE CASCADE,
    segmenter_id       text NOT NULL REFERENCES corpus_segmenters(id),
    passage_count      integer NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (source_version_id, segmenter_id)
);
CREATE INDEX corpus_segmentations_segmenter_idx ON corpus_segmentations (segmenter_id);

-- Exact stored passages. `seq` is the passage's key in the index; project and workspace are copied
-- from the source so that search can filter and re-check visibility without joins.
CREATE TABLE corpus_passages (
    id                  text PRIMARY KEY,                 -- psg_<ULID>
    seq                 bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    workspace_id        text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id          text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    source_id           text NOT NULL REFERENCES corpus_sources(id) ON DELETE CASCADE,
    source_version_id   text NOT NULL REFERENCES corpus_source_versions(id) ON DELETE CASCADE,
    segmenter_id        text NOT NULL REFERENCES corpus_segmenters(id),
    ordinal             integer NOT NULL,                 -- position within the version's segmentation
    page                integer,
    paragraph           integer,
    section             text,
    char_start          integer NOT NULL,
    char_end            integer NOT NULL CHECK (char_end > char_start),
    text                text NOT NULL,
    provenance_quality  text NOT NULL CHECK (provenance_quality IN ('exact_text', 'extracted', 'ocr')),
    UNIQUE (source_version_id, segmenter_id, ordinal)
);

-- The index follows this log in order: one row per committed change set (never split across index
-- commits). Rows are appended under an advisory lock, so `seq` order is commit order.
CREATE TABLE corpus_index_log (
    seq         bigserial PRIMARY KEY,
    changes     jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION corpus_index_log_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('groundwork_corpus_index', '');
    RETURN NULL;
END;
$$;
CREATE TRIGGER corpus_index_log_notify_after_insert AFTER INSERT ON corpus_index_log
    FOR EACH STATEMENT EXECUTE FUNCTION corpus_index_log_notify();
