// A real OpenID Connect provider for grantry's tests: panva's oidc-provider (pinned in
// package.json), run as TWO issuers in this one process, each on a loopback port the OS picks,
// both signing with THE SAME RSA key (RS256, generated at start, one kid). The second issuer
// exists so a test can hold a token that is validly signed with a known kid but carries the
// wrong `iss`. Everything is in memory; nothing survives a restart.
//
// Run:   deps="$(tests/oidc/install)" && ln -sfn "$deps/node_modules" tests/oidc/node_modules
//        PATH="$deps/node_modules/.bin:$PATH" node tests/oidc/server.mjs
// (the pinned Node 24 from npm; oidc-provider 9 supports Node >= 22 LTS and warns on 20).
// When both issuers listen it prints exactly one line on stdout and nothing else ever:
//   {"issuer":"http://127.0.0.1:P1","other_issuer":"http://127.0.0.1:P2"}
// Diagnostics (provider errors, notices) go to stderr. SIGTERM / SIGINT: clean exit 0; with
// --exit-with-stdin also when stdin reaches its end (the parent went away).
//
// Both issuers:
// - Any login string is an account: sub = the login; claims sub and name (profile scope).
// - Any absolute http(s) `resource` is accepted (RFC 8707). Its access tokens are RFC 9068 JWTs
//   (header typ "at+jwt", RS256, the shared kid) with aud = the resource, client_id, sub,
//   scope = the requested scopes other than openid/offline_access (`invoices` is always
//   allowed; a scope `never:…` is never granted, for a client that can never get it),
//   lifetime 3600 s; 2 s for client `expiring-client`; OPAQUE for `opaque-client`.
// - Introspection (RFC 7662) at /token/introspection: client `grantry` (basic auth, secret
//   grantry-secret) may introspect any access token of any client; other clients only their own.
//   JWT access tokens cannot be introspected at all (oidc-provider answers 400
//   unsupported_token_type): use opaque-client for introspection tests.
// - Open dynamic client registration at /reg. PKCE S256 is required of every client.
// - Static clients: `grantry` (confidential, client_secret_basic or _post, any redirect URI
//   http://127.0.0.1:<port>/login/callback or http://localhost:<port>/login/callback);
//   `refreshing-client` (public, access tokens of 2 s, and a refresh token with every code);
//   `test-client`, `expiring-client`, `opaque-client` (public, redirect URI
//   http://127.0.0.1/callback, on any port); `service-client` (confidential, secret
//   service-secret, client_credentials only: its JWT access tokens have sub = client_id =
//   service-client, a caller with no person behind it).
// - No consent screen: consent is granted as requested. /interaction/:uid signs in the
//   `login_hint` at once, else shows a one-field form that POSTs login=<name> to
//   /interaction/:uid/login. A browser whose provider session is for another account than
//   login_hint gets error=login_required back (use a fresh cookie jar per user).
// - GET /test/stats: {"token_requests":{"<issuer>":n,...},"introspection_requests":{...}}.
//
// The HTTP steps to get an access token for user U and resource R (what
// tests/interop/oidc_fixture.py's access_token() does), with a cookie jar, redirects NOT
// followed automatically:
//  1. verifier = 43+ random base64url chars; challenge = base64url(sha256(verifier)).
//  2. GET <issuer>/auth?client_id=test-client&response_type=code
//        &redirect_uri=http://127.0.0.1/callback&scope=openid invoices&resource=R
//        &login_hint=U&code_challenge=<challenge>&code_challenge_method=S256&state=<s>
//     (nonce is optional for response_type=code; no prompt parameter is needed. Add
//      prompt=consent only if you ask for offline_access: oidc-provider drops that scope
//      otherwise, and only `grantry` is allowed the refresh_token grant.)
//  3. Follow each Location (303/302/... -> GET, relative to the current URL) until one starts
//     with the redirect_uri: <issuer>/auth -> /interaction/<uid> -> /auth/<uid> -> redirect_uri.
//     Its query has code, state (check it) and iss (RFC 9207, = the issuer); or error.
//     A browser that already has a session here skips the sign-in: /auth goes straight to
//     redirect_uri when its grant covers the request, else through /interaction/<uid> (consent
//     granted at once). Session cookies are named per issuer port, so one jar serves both.
//  4. POST <issuer>/token (application/x-www-form-urlencoded) grant_type=authorization_code,
//     code, redirect_uri=http://127.0.0.1/callback, client_id=test-client,
//     code_verifier=<verifier>, resource=R. (resource may be left out: the granted one is
//     used.) The JSON answer's access_token is the JWT (opaque for opaque-client); with the
//     openid scope it also has an id_token.
// Without login_hint, step 3 stops at /interaction/<uid> with a 200 HTML form: POST
// login=<U> to /interaction/<uid>/login (same cookie jar), then go on following Locations.

const realConsole = { ...console };
// oidc-provider prints its notices with console.info; stdout carries only the ready line.
console.log = (...args) => realConsole.error(...args);
console.info = (...args) => realConsole.error(...args);

import * as crypto from 'node:crypto';
import * as http from 'node:http';

const { default: Provider, errors, interactionPolicy } = await import('oidc-provider');
// The same in-memory store oidc-provider falls back to, passed explicitly so that it does not
// warn about it (one store per issuer).
const { createMemoryAdapter } = await import('oidc-provider/lib/adapters/memory_adapter.js');

const GRANTRY_REDIRECT = /^http:\/\/(127\.0\.0\.1|localhost):\d{1,5}\/login\/callback$/;
const TEST_REDIRECT = /^http:\/\/127\.0\.0\.1(:\d{1,5})?\/callback$/;
const PUBLIC_CLIENTS = ['test-client', 'expiring-client', 'opaque-client', 'refreshing-client'];
// Clients whose access tokens live 2 s.
const SHORT_LIVED = new Set(['expiring-client', 'refreshing-client']);
// Scopes that say something about the OpenID session, not about a resource.
const NOT_RESOURCE_SCOPES = new Set(['openid', 'offline_access']);

function signingKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  // RFC 7638 thumbprint as the kid.
  const thumb = crypto.createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }))
    .digest('base64url');
  return { ...jwk, kid: thumb, alg: 'RS256', use: 'sig' };
}

function splitScope(scope) {
  return (scope ?? '').split(' ').filter(Boolean);
}

// The scopes a resource server offers: `invoices` plus whatever this request (or the code /
// refresh token being redeemed) asked for.
function resourceScope(ctx) {
  const scopes = new Set(['invoices']);
  const { params, entities } = ctx.oidc;
  for (const source of [params?.scope, entities?.AuthorizationCode?.scope,
    entities?.RefreshToken?.scope]) {
    for (const scope of splitScope(source)) {
      if (!NOT_RESOURCE_SCOPES.has(scope) && !scope.startsWith('never:')) scopes.add(scope);
    }
  }
  return [...scopes].join(' ');
}

function isHttpUrl(value) {
  const url = URL.parse(value);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:');
}

function loginPolicy() {
  const policy = interactionPolicy.base();
  // oidc-provider ignores login_hint when the browser already has a session; a test that
  // asks for bob in alice's browser would silently get alice. Make that an interaction, which
  // the handler below answers with login_required.
  policy.get('login').checks.add(new interactionPolicy.Check(
    'login_hint_mismatch',
    'login_hint names another account than the session',
    'login_required',
    (ctx) => {
      const hint = ctx.oidc.params.login_hint;
      const current = ctx.oidc.session.accountId;
      return Boolean(hint && current && hint !== current);
    },
  ));
  return policy;
}

function configuration(jwks, port) {
  return {
    jwks,
    adapter: createMemoryAdapter(15),
    cookies: {
      keys: [crypto.randomBytes(32).toString('base64url')],
      // Cookies do not tell ports apart: name them per issuer so one cookie jar can hold a
      // session at each issuer.
      names: {
        session: `_session_${port}`,
        interaction: `_interaction_${port}`,
        resume: `_interaction_resume_${port}`,
      },
    },
    responseTypes: ['code'],
    clients: [
      {
        client_id: 'grantry',
        client_secret: 'grantry-secret',
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        // The one registered value; any port is accepted (see redirectUriAllowed below).
        redirect_uris: ['http://127.0.0.1/login/callback'],
        id_token_signed_response_alg: 'RS256',
      },
      // A client acting for itself (client credentials): its tokens' sub is its client_id.
      {
        client_id: 'service-client',
        client_secret: 'service-secret',
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
      ...PUBLIC_CLIENTS.map((clientId) => ({
        client_id: clientId,
        token_endpoint_auth_method: 'none',
        grant_types: clientId === 'refreshing-client'
          ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/callback'],
      })),
    ],
    scopes: ['openid', 'profile', 'invoices', 'offline_access'],
    claims: { openid: ['sub'], profile: ['name'] },
    // Put the requested profile claims in the ID token too, not only at /me.
    conformIdTokenClaims: false,
    async findAccount(ctx, sub) {
      return {
        accountId: sub,
        async claims() {
          return { sub, name: sub.charAt(0).toUpperCase() + sub.slice(1) };
        },
      };
    },
    pkce: { required: () => true },
    // The default needs offline_access (and a consent prompt); refreshing-client gets a refresh
    // token with every code, so a test can watch a public client refresh.
    async issueRefreshToken(ctx, client, code) {
      if (!client.grantTypeAllowed('refresh_token')) return false;
      return code.scopes.has('offline_access') || client.clientId === 'refreshing-client';
    },
    clientBasedCORS: () => true,
    interactions: {
      policy: loginPolicy(),
      url: (ctx, interaction) => `/interaction/${interaction.uid}`,
    },
    ttl: {
      AccessToken: (ctx, token, client) => token.resourceServer?.accessTokenTTL
        ?? (SHORT_LIVED.has(client?.clientId) ? 2 : 3600),
      AuthorizationCode: 60,
      ClientCredentials: 600,
      IdToken: 3600,
      Interaction: 3600,
      Grant: 24 * 3600,
      RefreshToken: 24 * 3600,
      Session: 24 * 3600,
    },
    async renderError(ctx, out) {
      ctx.type = 'text/plain';
      ctx.body = Object.entries(out).map(([k, v]) => `${k}: ${v}`).join('\n');
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      revocation: { enabled: true },
      introspection: {
        enabled: true,
        // The caller may see a token if it is the token's own client, or if it is `grantry`
        // (the resource server in grantry's tests) and the token is an access token.
        // Refresh tokens only to their own client. (The default policy would let ANY
        // confidential client introspect anything.)
        allowedPolicy(ctx, client, token) {
          if (client.clientId === token.clientId) return true;
          return client.clientId === 'grantry'
            && (token.kind === 'AccessToken' || token.kind === 'ClientCredentials');
        },
      },
      resourceIndicators: {
        enabled: true,
        // No resource unless one is asked for (a sign-in with just openid gets the usual
        // opaque access token for /me).
        defaultResource: (ctx, client, oneOf) => oneOf,
        // A token request without `resource` gets the resource granted at /auth.
        useGrantedResource: () => true,
        getResourceServerInfo(ctx, resourceIndicator, client) {
          if (!isHttpUrl(resourceIndicator)) {
            throw new errors.InvalidTarget('resource must be an absolute http(s) URL');
          }
          return {
            scope: resourceScope(ctx),
            audience: resourceIndicator,
            accessTokenTTL: SHORT_LIVED.has(client?.clientId) ? 2 : 3600,
            accessTokenFormat: client?.clientId === 'opaque-client' ? 'opaque' : 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
  };
}

function readForm(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

function send(res, status, type, body) {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', 'no-store');
  res.end(body);
}

function escapeHtml(value) {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// Grants everything the authorization request asked for (and whatever the consent prompt
// says is missing) to `accountId`, and returns the grant id.
async function grantAll(provider, interaction, accountId) {
  const { params, prompt } = interaction;
  let grant;
  if (interaction.grantId) {
    grant = await provider.Grant.find(interaction.grantId);
    if (grant && grant.accountId !== accountId) grant = undefined;
  }
  grant ||= new provider.Grant({ accountId, clientId: params.client_id });

  const scopes = splitScope(params.scope);
  if (scopes.length) grant.addOIDCScope(scopes.join(' '));
  if (params.claims) {
    const claims = JSON.parse(params.claims);
    const names = new Set([...Object.keys(claims.id_token ?? {}),
      ...Object.keys(claims.userinfo ?? {})]);
    if (names.size) grant.addOIDCClaims([...names]);
  }
  const resourceScopes = scopes.filter((s) => !NOT_RESOURCE_SCOPES.has(s));
  const resources = [params.resource ?? []].flat();
  if (resourceScopes.length) {
    for (const resource of resources) grant.addResourceScope(resource, resourceScopes.join(' '));
  }

  const details = prompt?.details ?? {};
  if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '));
  if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
  for (const [resource, missing] of Object.entries(details.missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, missing.join(' '));
  }
  return grant.save();
}

async function finishLogin(provider, req, res, interaction, login) {
  const grantId = await grantAll(provider, interaction, login);
  await provider.interactionFinished(req, res, {
    login: { accountId: login },
    consent: { grantId },
  }, { mergeWithLastSubmission: false });
}

async function interactionPage(provider, req, res, uid) {
  const interaction = await provider.interactionDetails(req, res);
  if (interaction.uid !== uid) {
    send(res, 400, 'text/plain', 'interaction cookie does not match this URL\n');
    return;
  }
  const { prompt, params, session } = interaction;
  if (prompt.name === 'login') {
    if (prompt.reasons.includes('login_hint_mismatch')) {
      await provider.interactionFinished(req, res, {
        error: 'login_required',
        error_description: `this browser is signed in as ${session?.accountId}, not as the login_hint ${params.login_hint}; use a fresh cookie jar`,
      }, { mergeWithLastSubmission: false });
      return;
    }
    if (params.login_hint) {
      await finishLogin(provider, req, res, interaction, params.login_hint);
      return;
    }
    send(res, 200, 'text/html; charset=utf-8', `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in to ${escapeHtml(provider.issuer)}</h1>
<p>Client: ${escapeHtml(params.client_id)}</p>
<form method="post" action="/interaction/${escapeHtml(uid)}/login"><input name="login"><button type="submit">Sign in</button></form>
</body></html>
`);
    return;
  }
  if (prompt.name === 'consent') {
    const grantId = await grantAll(provider, interaction, session.accountId);
    await provider.interactionFinished(req, res, { consent: { grantId } },
      { mergeWithLastSubmission: true });
    return;
  }
  send(res, 400, 'text/plain', `unexpected prompt ${prompt.name}\n`);
}

async function interactionLogin(provider, req, res, uid) {
  const form = await readForm(req);
  const login = (form.get('login') ?? '').trim();
  const interaction = await provider.interactionDetails(req, res);
  if (interaction.uid !== uid) {
    send(res, 400, 'text/plain', 'interaction cookie does not match this URL\n');
    return;
  }
  if (!login) {
    send(res, 400, 'text/plain', 'login must not be empty\n');
    return;
  }
  await finishLogin(provider, req, res, interaction, login);
}

async function startIssuer(jwks, stats) {
  let handler = (req, res) => send(res, 503, 'text/plain', 'starting\n');
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, configuration(jwks, server.address().port));
  // Any loopback port for grantry's /login/callback and the test clients' /callback.
  const allowed = provider.Client.prototype.redirectUriAllowed;
  provider.Client.prototype.redirectUriAllowed = function redirectUriAllowed(value) {
    if (this.clientId === 'grantry' && GRANTRY_REDIRECT.test(value)) return true;
    if (PUBLIC_CLIENTS.includes(this.clientId) && TEST_REDIRECT.test(value)) return true;
    return allowed.call(this, value);
  };
  for (const event of ['server_error', 'authorization.error', 'grant.error',
    'introspection.error', 'registration_create.error', 'revocation.error', 'userinfo.error']) {
    provider.on(event, (ctx, err) => {
      realConsole.error(`[${issuer}] ${event}: ${err?.error ?? ''} ${err?.error_description ?? err?.message ?? err}`);
      if (event === 'server_error') realConsole.error(err?.stack ?? err);
    });
  }
  stats.token_requests[issuer] = 0;
  stats.introspection_requests[issuer] = 0;
  const callback = provider.callback();
  handler = async (req, res) => {
    const { pathname } = new URL(req.url, issuer);
    try {
      if (pathname === '/token' && req.method === 'POST') stats.token_requests[issuer] += 1;
      if (pathname === '/token/introspection' && req.method === 'POST') {
        stats.introspection_requests[issuer] += 1;
      }
      if (pathname === '/test/stats' && req.method === 'GET') {
        send(res, 200, 'application/json', `${JSON.stringify(stats)}\n`);
        return;
      }
      let match = /^\/interaction\/([^/]+)$/.exec(pathname);
      if (match && req.method === 'GET') {
        await interactionPage(provider, req, res, match[1]);
        return;
      }
      match = /^\/interaction\/([^/]+)\/login$/.exec(pathname);
      if (match && req.method === 'POST') {
        await interactionLogin(provider, req, res, match[1]);
        return;
      }
      callback(req, res);
    } catch (err) {
      realConsole.error(`[${issuer}] ${req.method} ${pathname}: ${err?.stack ?? err}`);
      if (!res.headersSent) {
        send(res, err instanceof errors.OIDCProviderError ? err.statusCode : 500, 'text/plain',
          `${err?.error ?? 'error'}: ${err?.error_description ?? err?.message}\n`);
      } else {
        res.end();
      }
    }
  };
  return { issuer, server };
}

const jwks = { keys: [signingKey()] };
const stats = { token_requests: {}, introspection_requests: {} };
const first = await startIssuer(jwks, stats);
const second = await startIssuer(jwks, stats);

function shutdown() {
  for (const { server } of [first, second]) {
    server.closeAllConnections();
    server.close();
  }
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
// With --exit-with-stdin, the provider lives as long as its parent holds the stdin pipe open:
// a test process that exits (or crashes) without stopping it leaves no orphan behind.
if (process.argv.includes('--exit-with-stdin')) {
  process.stdin.on('end', shutdown);
  process.stdin.on('error', shutdown);
  process.stdin.resume();
}

process.stdout.write(`${JSON.stringify({ issuer: first.issuer, other_issuer: second.issuer })}\n`);
