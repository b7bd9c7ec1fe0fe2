-- Legacy-era (2025-11-25) MCP sessions, shared by the replicas: who opened each one and the
-- client's `initialize` parameters, so any replica can restore it.
CREATE TABLE mcp_sessions (
    id            TEXT PRIMARY KEY,
    owner         TEXT NOT NULL,
    initialize    TEXT NOT NULL,
    expires_at_ms BIGINT NOT NULL
);
CREATE INDEX mcp_sessions_expires_at_ms ON mcp_sessions (expires_at_ms);
