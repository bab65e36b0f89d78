-- Evidence search at the speed of its index.
--
-- 1. The index serves a source version before PostgreSQL marks it active (index, then activate):
--    `published_version_id` is the version the index log last made serve for a source, and a
--    version's `index_seq` is the log position of that change set.
-- 2. Readers know which log position their index snapshot reached, so a segmenter switch and a
--    reclassification take effect for a reader exactly when its snapshot holds them.
-- 3. API processes cache resolved keys, visibility and the corpus serving state; these triggers tell
--    every process (LISTEN groundwork_cache) when a cached fact changes.

ALTER TABLE corpus_sources ADD COLUMN published_version_id text
    REFERENCES corpus_source_versions(id) ON DELETE SET NULL;
ALTER TABLE corpus_sources ADD COLUMN classification_seq bigint NOT NULL DEFAULT 0;
ALTER TABLE corpus_source_versions ADD COLUMN index_seq bigint;
ALTER TABLE corpus_segmenters ADD COLUMN switch_seq bigint NOT NULL DEFAULT 0;

UPDATE corpus_sources s SET published_version_id = v.id
    FROM corpus_source_versions v WHERE v.source_id = s.id AND v.status = 'active';
UPDATE corpus_source_versions SET index_seq = 0 WHERE status = 'active';

CREATE FUNCTION groundwork_cache_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Identical payloads within one transaction are delivered once.
    PERFORM pg_notify('groundwork_cache', TG_ARGV[0]);
    RETURN NULL;
END;
$$;

-- Keys: a revoke, a new key (it may have been cached as unknown), the principal or app behind a key.
-- `last_used_at` is bookkeeping and must not flush every cache once a minute.
CREATE TRIGGER api_keys_cache_insert AFTER INSERT OR DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('auth');
CREATE TRIGGER api_keys_cache_update AFTER UPDATE OF revoked_at, scopes, app_id, principal_id, key_hash ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('auth');
CREATE TRIGGER principals_cache AFTER UPDATE OR DELETE ON principals
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('auth');
CREATE TRIGGER principals_cache_visibility AFTER UPDATE OR DELETE ON principals
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('visibility');
CREATE TRIGGER connected_apps_cache AFTER UPDATE OR DELETE ON connected_apps
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('auth');

-- Visibility: who reads which project, and which projects a subject reaches.
CREATE TRIGGER memberships_cache AFTER INSERT OR UPDATE OR DELETE ON memberships
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('visibility');
CREATE TRIGGER roles_cache AFTER INSERT OR UPDATE OR DELETE ON roles
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('visibility');
CREATE TRIGGER projects_cache_insert AFTER INSERT OR DELETE ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('visibility');
CREATE TRIGGER projects_cache_update AFTER UPDATE OF engagement_id, workspace_id ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('visibility');
CREATE TRIGGER engagements_cache AFTER INSERT OR DELETE OR UPDATE OF portfolio_id ON engagements
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('visibility');
CREATE TRIGGER portfolios_cache AFTER INSERT OR DELETE ON portfolios
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('visibility');

-- The corpus serving state: segmenter versions, and sources whose classification changed.
CREATE TRIGGER corpus_segmenters_cache AFTER INSERT OR UPDATE OR DELETE ON corpus_segmenters
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('corpus');
CREATE TRIGGER corpus_sources_cache AFTER UPDATE OF classification ON corpus_sources
    FOR EACH STATEMENT EXECUTE FUNCTION groundwork_cache_notify('corpus');

-- The passage that opens a section carries its heading in the index (see docs/decisions.md).
ALTER TABLE corpus_passages ADD COLUMN opens_section boolean NOT NULL DEFAULT false;
UPDATE corpus_passages p SET opens_section = true
    FROM (SELECT id, section IS NOT NULL AND section IS DISTINCT FROM
                 lag(section) OVER (PARTITION BY source_version_id, segmenter_id ORDER BY ordinal) AS opens
          FROM corpus_passages) x
    WHERE x.id = p.id AND x.opens;
