-- The id of the key each grant is sealed under, so keys can be rotated and retired safely.
-- Rows written before this column have '' (unknown) until their next write or a rewrap.
ALTER TABLE grants ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
CREATE INDEX grants_by_key ON grants (key_id);
