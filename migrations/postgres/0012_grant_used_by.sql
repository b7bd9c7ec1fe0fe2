-- The MCP client a connection was last used through: `client_id:ID` (the client its access
-- token was issued to) or `declared:NAME` (the name it gave itself, unverified); '' for none
-- recorded. Written with `used_at`, never by a sign-in or a refresh.
ALTER TABLE grants ADD COLUMN used_by TEXT NOT NULL DEFAULT '';

-- MCP clients an operator refused the use of connections to (`grantry clients block`).
CREATE TABLE blocked_clients (
    client_id  TEXT PRIMARY KEY,
    blocked_at BIGINT NOT NULL
);
