-- MCP tasks (the Tasks extension): a call that outlives its request. Keyed by the hash of
-- the task's id (the id is the client's bearer handle and is never stored); the call, what
-- it waits for and its result are one sealed value. Times are Unix milliseconds.
CREATE TABLE tasks (
    id_hash       TEXT PRIMARY KEY,
    principal_iss TEXT NOT NULL,
    principal_sub TEXT NOT NULL,
    status        TEXT NOT NULL,
    version       BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    sealed        TEXT NOT NULL
);
CREATE INDEX tasks_by_principal ON tasks (principal_iss, principal_sub);
CREATE INDEX tasks_by_expiry ON tasks (expires_at);
