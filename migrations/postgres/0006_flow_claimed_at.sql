-- When the callback claimed a flow: a flow still `redeeming` long after it (its replica died
-- during the token request) is treated as failed, so its owner can start again.
ALTER TABLE flows ADD COLUMN claimed_at BIGINT;
