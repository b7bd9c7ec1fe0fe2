-- Connection health, kept with the grant: a connection that needs re-authorization stays
-- (with its id and history) until the user reconnects or disconnects.
--   connection_id: stable across reconnects ('' on rows from before: derived from the key);
--   state:         active | refresh_failing | needs_reauth;
--   health:        JSON (reason, failures, next try, last refresh, hard expiry, warned);
--   keepalive_at:  when the keep-alive scheduler next looks at the grant (0: never);
--   used_at:       when a tool last used it (written at most every few minutes).
ALTER TABLE grants ADD COLUMN connection_id TEXT NOT NULL DEFAULT '';
ALTER TABLE grants ADD COLUMN state TEXT NOT NULL DEFAULT 'active';
ALTER TABLE grants ADD COLUMN health TEXT NOT NULL DEFAULT '{}';
-- Rows from before are looked at once, soon, and rescheduled from their last write.
ALTER TABLE grants ADD COLUMN keepalive_at BIGINT NOT NULL DEFAULT 1;
ALTER TABLE grants ADD COLUMN used_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX grants_by_keepalive ON grants (keepalive_at) WHERE keepalive_at > 0;

-- The transactional outbox: each lifecycle event, once per webhook endpoint, written in the
-- same transaction as the grant change it reports. Delivery claims rows (claimed_until) so
-- one replica sends each; a connection's events reach an endpoint in seq order.
CREATE TABLE webhook_outbox (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id        TEXT NOT NULL,
    endpoint        TEXT NOT NULL,
    connection      TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    body            TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    status          TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    claimed_until   BIGINT NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    delivered_at    BIGINT NOT NULL DEFAULT 0,
    UNIQUE (event_id, endpoint)
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (status, next_attempt_at);
CREATE INDEX webhook_outbox_order ON webhook_outbox (connection, endpoint, status, seq);
