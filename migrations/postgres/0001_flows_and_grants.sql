-- Sign-in flows: one row per browser that pressed Continue on a connect page.
-- Secrets are kept only sealed (the PKCE verifier) or hashed (OAuth state, binding cookie).
CREATE TABLE flows (
    id              TEXT PRIMARY KEY,
    seq             BIGSERIAL NOT NULL,
    ticket_id       TEXT NOT NULL,
    principal_iss   TEXT NOT NULL,
    principal_sub   TEXT NOT NULL,
    provider        TEXT NOT NULL,
    verifier_sealed TEXT,
    state_hash      TEXT NOT NULL UNIQUE,
    binding_hash    TEXT NOT NULL,
    status          TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL
);
CREATE INDEX flows_by_ticket ON flows (ticket_id, created_at);
CREATE INDEX flows_by_expiry ON flows (expires_at);

-- Grants: one per (principal, provider); tokens sealed with the row's key in the AEAD's
-- associated data, so a ciphertext copied to another row does not open.
CREATE TABLE grants (
    principal_iss     TEXT NOT NULL,
    principal_sub     TEXT NOT NULL,
    provider          TEXT NOT NULL,
    tokens_sealed     TEXT NOT NULL,
    access_expires_at BIGINT NOT NULL,
    scopes            TEXT NOT NULL,
    version           BIGINT NOT NULL,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    PRIMARY KEY (principal_iss, principal_sub, provider)
);
