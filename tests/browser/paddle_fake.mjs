// A fake of Paddle Billing's API for the real-browser tests, in the test's own process.
// Paddle cannot be reached from CI; this fake checks what Paddle checks on the one endpoint
// grantry calls: the key as `Authorization: Bearer …` (any other, or none, gets 403
// `invalid_token` in Paddle's error shape) and `Paddle-Version: 1`; it answers
// `GET /transactions` in Paddle's shape (`data`, `meta.pagination`).
import { createServer } from 'node:http';

/** The one key the fake accepts (a sandbox key's shape). */
export const PADDLE_KEY = 'pdl_sdbx_apikey_01jbrowserfake_k3yOnlyTheFakeKn0ws7';

const TRANSACTIONS = [
  ['txn_01a', 'billed', '11900'],
  ['txn_01b', 'paid', '5000'],
  ['txn_01c', 'past_due', '4200'],
];

/** Starts the fake on a loopback port; `seen` counts the keys it served and refused. */
export async function startPaddleFake() {
  const seen = { served: 0, refused: 0 };
  const server = createServer((req, res) => {
    const send = (status, value) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const url = new URL(req.url, 'http://fake');
    if (url.pathname !== '/transactions') return send(404, { error: { code: 'not_found' } });
    if (req.headers.authorization !== `Bearer ${PADDLE_KEY}`) {
      seen.refused += 1;
      return send(403, {
        error: { type: 'request_error', code: 'invalid_token', detail: 'Invalid or revoked API key.' },
        meta: { request_id: 'r' },
      });
    }
    if ((req.headers['paddle-version'] ?? '1') !== '1') return send(400, { error: { code: 'invalid_version' } });
    seen.served += 1;
    const data = TRANSACTIONS.map(([id, status, total]) => ({
      id, status, customer_id: 'ctm_01fake', invoice_number: `INV-${id}`, currency_code: 'EUR',
      details: { totals: { grand_total: total } },
      billed_at: '2026-11-02T10:00:00Z', created_at: '2026-11-01T09:00:00Z',
    }));
    send(200, { data, meta: { request_id: 'r', pagination: { per_page: 50, next: null, has_more: false } } });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${server.address().port}`, seen, close: () => server.close() };
}
