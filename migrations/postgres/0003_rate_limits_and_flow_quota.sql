-- Rate-limit counters shared by all replicas: hits per (counter key, one-minute window).
-- The key is a bucket name and a hash of who was counted (no raw address is stored).
CREATE TABLE rate_counters (
    counter_key  TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    hits         BIGINT NOT NULL,
    PRIMARY KEY (counter_key, window_start)
);

-- The pending flows of one principal, for the cap on sign-ins waiting at once.
CREATE INDEX flows_by_principal ON flows (principal_iss, principal_sub, status);
