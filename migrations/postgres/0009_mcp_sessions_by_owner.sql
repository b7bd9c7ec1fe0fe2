-- A principal keeps a bounded number of legacy-era sessions: a new one past the cap forgets
-- that principal's least recently used, found by this index.
CREATE INDEX mcp_sessions_owner ON mcp_sessions (owner, expires_at_ms);
