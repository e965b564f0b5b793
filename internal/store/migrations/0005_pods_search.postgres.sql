-- Search (a substring of search_text, see models/podsearch.go) is a LIKE
-- '%…%', which no b-tree serves; a pg_trgm GIN index does. Creating the
-- extension takes a superuser or, for pg_trgm (a trusted extension since
-- PostgreSQL 13), the database owner. Where it cannot be created the
-- migration goes on without the index: search still answers, by scanning
-- the tenant's pods. Once an administrator has run CREATE EXTENSION pg_trgm,
--   CREATE INDEX pods_search_trgm ON pods USING gin (search_text gin_trgm_ops);
-- adds it by hand.
DO $$ BEGIN CREATE EXTENSION IF NOT EXISTS pg_trgm; EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'pg_trgm is not available (%), pod search will scan without an index', SQLERRM; END $$;
DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN CREATE INDEX IF NOT EXISTS pods_search_trgm ON pods USING gin (search_text gin_trgm_ops); END IF; END $$;
