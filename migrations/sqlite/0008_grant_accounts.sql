-- Several accounts per provider: a grant is keyed by (principal, provider, account), the
-- account being the provider's id of the tenant, company or business it is used with.
-- Existing rows keep '' (their account is inside their sealed tokens, which SQL cannot read):
-- grantry finds them by their tokens' account, and a new sign-in to that account replaces
-- them in place, so nothing is lost or doubled. SQLite cannot change a primary key in place:
-- the table is rebuilt, every row copied.
CREATE TABLE grants_by_account (
    principal_iss     TEXT NOT NULL,
    principal_sub     TEXT NOT NULL,
    provider          TEXT NOT NULL,
    account           TEXT NOT NULL DEFAULT '',
    tokens_sealed     TEXT NOT NULL,
    access_expires_at BIGINT NOT NULL,
    scopes            TEXT NOT NULL,
    version           BIGINT NOT NULL,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    key_id            TEXT NOT NULL DEFAULT '',
    connection_id     TEXT NOT NULL DEFAULT '',
    state             TEXT NOT NULL DEFAULT 'active',
    health            TEXT NOT NULL DEFAULT '{}',
    keepalive_at      BIGINT NOT NULL DEFAULT 1,
    used_at           BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (principal_iss, principal_sub, provider, account)
);
INSERT INTO grants_by_account (principal_iss, principal_sub, provider, account, tokens_sealed,
    access_expires_at, scopes, version, created_at, updated_at, key_id, connection_id, state,
    health, keepalive_at, used_at)
SELECT principal_iss, principal_sub, provider, '', tokens_sealed, access_expires_at, scopes,
    version, created_at, updated_at, key_id, connection_id, state, health, keepalive_at, used_at
FROM grants;
DROP TABLE grants;
ALTER TABLE grants_by_account RENAME TO grants;
CREATE INDEX grants_by_key ON grants (key_id);
CREATE INDEX grants_by_keepalive ON grants (keepalive_at) WHERE keepalive_at > 0;
