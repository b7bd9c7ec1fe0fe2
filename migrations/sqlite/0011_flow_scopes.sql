-- The provider scopes a sign-in asked for (space-separated): a token answer that names none
-- granted exactly these (RFC 6749 section 5.1), and one that names fewer is told to the person.
ALTER TABLE flows ADD COLUMN scopes TEXT NOT NULL DEFAULT '';
