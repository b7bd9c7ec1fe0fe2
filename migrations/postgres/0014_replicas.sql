-- The replicas serving this store, each as it records itself (the settings replicas must
-- agree on, as JSON), refreshed while it runs and removed when it stops.
CREATE TABLE replicas (
    id      TEXT PRIMARY KEY,
    record  TEXT NOT NULL,
    seen_at BIGINT NOT NULL
);
