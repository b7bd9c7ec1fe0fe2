-- Several accounts per provider: a grant is keyed by (principal, provider, account), the
-- account being the provider's id of the tenant, company or business it is used with.
-- Existing rows keep '' (their account is inside their sealed tokens, which SQL cannot read):
-- grantry finds them by their tokens' account, and a new sign-in to that account replaces
-- them in place, so nothing is lost or doubled.
ALTER TABLE grants ADD COLUMN account TEXT NOT NULL DEFAULT '';
ALTER TABLE grants DROP CONSTRAINT grants_pkey;
ALTER TABLE grants ADD PRIMARY KEY (principal_iss, principal_sub, provider, account);
