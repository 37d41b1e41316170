-- Up Migration

-- The publisher's own time of each imported list (its file's header, the time given at import, the
-- file's date) and where it comes from: lists age from it, not from the import. Lists imported before
-- this column existed have no other time than their import.
ALTER TABLE intel_lists
  ADD COLUMN published_at bigint,
  ADD COLUMN published_from text NOT NULL DEFAULT 'import'
    CHECK (published_from IN ('content', 'option', 'file-date', 'import'));
UPDATE intel_lists SET published_at = imported_at;
ALTER TABLE intel_lists ALTER COLUMN published_at SET NOT NULL;

-- Down Migration

ALTER TABLE intel_lists DROP COLUMN published_from, DROP COLUMN published_at;
