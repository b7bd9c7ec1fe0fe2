-- Leases: short exclusive locks shared by the replicas (single-flight token refresh).
CREATE TABLE leases (
    name          TEXT PRIMARY KEY,
    holder        TEXT NOT NULL,
    expires_at_ms BIGINT NOT NULL
);
