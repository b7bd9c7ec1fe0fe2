// A fake of Xero for the real-browser tests, in the test's own process. Xero cannot be
// reached from CI; this fake checks what Xero checks on the steps grantry takes: the client's
// HTTP Basic authentication, the PKCE verifier against the challenge, the redirect URI against
// the authorization request's, a code used once; and it answers in Xero's shapes:
// - GET  /oauth/authorize: the organisation picker a person sees at Xero (one link per
//   organisation), which redirects back with a code;
// - POST /oauth/token: tokens whose access token is a JWT naming the sign-in
//   (`authentication_event_id`), as Xero's are;
// - GET  /api/connections?authEventId=: the organisations that sign-in connected;
// - DELETE /api/connections/{id}: ends one organisation's connection (recorded);
// - POST /oauth/revoke: revokes a refresh token (and records whose organisation it was).
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

export const ORGANISATIONS = [
  { tenantId: 'tenant-1', tenantName: 'Demo Company (UK)' },
  { tenantId: 'tenant-2', tenantName: 'Second Company (NZ)' },
];
const CLIENT = 'client-xero';
const SECRET = 'fake-client-secret';

const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
const html = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Starts the fake on a loopback port; `revoked` lists the organisations whose grant was revoked
 * or whose connection was ended alone.
 */
export async function startXeroFake() {
  const codes = new Map(); // code → { tenant, redirectUri, challenge }
  const events = new Map(); // authentication_event_id → tenant
  const refresh = new Map(); // live refresh token → tenant
  const access = new Set();
  const revoked = [];

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://fake');
    let body = '';
    for await (const chunk of req) body += chunk;
    const form = new URLSearchParams(body);
    const send = (status, value, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(type === 'application/json' ? JSON.stringify(value) : value);
    };
    const basic = req.headers.authorization === `Basic ${Buffer.from(`${CLIENT}:${SECRET}`).toString('base64')}`;

    if (url.pathname === '/oauth/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== CLIENT || q.get('code_challenge_method') !== 'S256') {
        return send(400, { error: 'invalid_request' });
      }
      const links = ORGANISATIONS.map((org) => {
        const code = randomBytes(16).toString('hex');
        codes.set(code, { tenant: org, redirectUri: q.get('redirect_uri'), challenge: q.get('code_challenge') });
        const back = new URL(q.get('redirect_uri'));
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state'));
        return `<li><a href="${html(back.href)}">${html(org.tenantName)}</a></li>`;
      });
      return send(200, `<!doctype html><html lang="en"><title>Xero (fake)</title><main>
        <h1>Which organisation?</h1><ul>${links.join('')}</ul></main></html>`, 'text/html');
    }
    if (url.pathname === '/oauth/token' && req.method === 'POST') {
      const code = codes.get(form.get('code'));
      codes.delete(form.get('code'));
      const verified = code && createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') === code.challenge;
      if (!basic) return send(401, { error: 'invalid_client' });
      if (form.get('grant_type') !== 'authorization_code' || !verified || form.get('redirect_uri') !== code.redirectUri) {
        return send(400, { error: 'invalid_grant' });
      }
      const event = randomBytes(8).toString('hex');
      events.set(event, code.tenant);
      const accessToken = `${b64({ alg: 'RS256' })}.${b64({ authentication_event_id: event, jti: randomBytes(8).toString('hex') })}.fake`;
      const refreshToken = randomBytes(16).toString('hex');
      access.add(accessToken);
      refresh.set(refreshToken, code.tenant);
      return send(200, { access_token: accessToken, refresh_token: refreshToken, token_type: 'Bearer', expires_in: 1800 });
    }
    if (url.pathname === '/api/connections') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!access.has(token)) return send(401, { error: 'unauthorized' });
      const tenant = events.get(url.searchParams.get('authEventId'));
      const listed = tenant ? [tenant] : ORGANISATIONS;
      return send(200, listed.map((t) => ({ id: `c-${t.tenantId}`, tenantType: 'ORGANISATION', ...t })));
    }
    if (url.pathname.startsWith('/api/connections/') && req.method === 'DELETE') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!access.has(token)) return send(401, { error: 'unauthorized' });
      const org = ORGANISATIONS.find((t) => url.pathname === `/api/connections/c-${t.tenantId}`);
      if (!org) return send(404, { error: 'not_found' });
      revoked.push(org.tenantId);
      res.writeHead(204);
      return res.end();
    }
    if (url.pathname === '/oauth/revoke' && req.method === 'POST') {
      if (!basic) return send(401, { error: 'invalid_client' });
      const tenant = refresh.get(form.get('token'));
      if (tenant) {
        refresh.delete(form.get('token'));
        revoked.push(tenant.tenantId);
      }
      return send(200, {});
    }
    send(404, { error: 'not_found' });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base,
    revoked,
    close: () => server.close(),
    /** A `--providers` catalog naming this fake as Xero (its secret in FAKE_SECRET). */
    catalog: () => `default = "xero"\n[providers.xero]\nclient_id = "${CLIENT}"\nclient_secret_env = "FAKE_SECRET"\n`
      + `authorize_url = "${base}/oauth/authorize"\ntoken_url = "${base}/oauth/token"\n`
      + `revoke_url = "${base}/oauth/revoke"\napi_base = "${base}/api"\n`,
    secret: SECRET,
  };
}
