-- Each webhook endpoint is delivered to on its own (a hanging one delays only itself): claims
-- and the cap on what waits are per endpoint, in order.
CREATE INDEX webhook_outbox_by_endpoint ON webhook_outbox (endpoint, status, seq);
