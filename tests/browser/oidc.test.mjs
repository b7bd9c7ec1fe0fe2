// oidc identity in a real browser (headless Chromium) against a real OpenID Connect provider
// (oidc-provider, tests/oidc): the connect page sends a browser with no session to the
// issuer's login and back to the same page; another user is refused; the owner finishes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callListInvoices, freePort, launchChromium } from './support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const oidcDir = join(here, '..', 'oidc');
let browser;
let issuer;
const processes = [];

/** Starts the pinned OIDC provider (installed by tests/oidc/install); returns its issuer. */
async function startProvider() {
  const deps = execFileSync(join(oidcDir, 'install'), { encoding: 'utf8' }).trim().split('\n').pop();
  rmSync(join(oidcDir, 'node_modules'), { force: true });
  symlinkSync(join(deps, 'node_modules'), join(oidcDir, 'node_modules'));
  const child = spawn(join(deps, 'node_modules/.bin/node'), [join(oidcDir, 'server.mjs')], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  processes.push(child);
  const [line] = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', (l) => resolve([l])));
  return JSON.parse(line).issuer;
}

async function startGrantry() {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'grantry-browser-'));
  const args = ['--listen', `127.0.0.1:${port}`, '--data-dir', dataDir, '--identity', 'oidc',
    '--oidc-issuer', issuer, '--oidc-client-id', 'grantry', '--demo', 'true'];
  processes.push(spawn(process.env.GRANTRY_BIN, args, {
    stdio: 'ignore',
    env: { ...process.env, GRANTRY_OIDC_CLIENT_SECRET: 'grantry-secret' },
  }));
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return base;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('grantry did not start');
}

/** An MCP access token for `user` and `resource`, by authorization code + PKCE. */
async function accessToken(user, resource) {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const redirect = 'http://127.0.0.1/callback';
  const url = new URL(`${issuer}/auth`);
  for (const [k, v] of Object.entries({ client_id: 'test-client', response_type: 'code', redirect_uri: redirect,
    scope: 'openid invoices', resource, login_hint: user, code_challenge: challenge,
    code_challenge_method: 'S256', state: 'browser-test' })) url.searchParams.set(k, v);
  let cookies = '';
  let next = url.href;
  for (let hop = 0; hop < 10; hop++) {
    const r = await fetch(next, { redirect: 'manual', headers: { cookie: cookies } });
    for (const c of r.headers.getSetCookie()) cookies += `${c.split(';')[0]}; `;
    const location = new URL(r.headers.get('location'), next).href;
    if (location.startsWith(redirect)) {
      const code = new URL(location).searchParams.get('code');
      const token = await fetch(`${issuer}/token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirect,
          client_id: 'test-client', code_verifier: verifier, resource }),
      });
      return (await token.json()).access_token;
    }
    next = location;
  }
  throw new Error('no code');
}

before(async () => {
  issuer = await startProvider();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  for (const p of processes) p.kill();
});

test('oidc: another user is refused at the connect page and the caller finishes', async () => {
  const base = await startGrantry();
  const alice = `alice-${randomBytes(4).toString('hex')}`;
  const bob = `bob-${randomBytes(4).toString('hex')}`;
  const token = await accessToken(alice, `${base}/mcp`);
  const first = await callListInvoices(base, { token });
  assert.equal(first.resultType, 'input_required');
  const [key, request] = Object.entries(first.inputRequests)[0];
  const link = request.params.url;

  const signIn = async (user) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    assert.match(page.url(), /\/interaction\//, 'no session yet: the issuer asks who is there');
    await page.fill('input[name=login]', user);
    const response = await Promise.all([
      page.waitForURL((u) => u.href === link),
      page.click('button[type=submit]'),
    ]);
    return { context, page, response };
  };

  const bobs = await signIn(bob);
  assert.match(await bobs.page.textContent('h1'), /belongs to someone else/);
  await bobs.context.close();

  const alices = await signIn(alice);
  assert.match(await alices.page.textContent('main'), new RegExp(`Signed in as\\s*${alice}`));
  const session = (await alices.context.cookies()).find((c) => c.name === 'grantry-session');
  assert.ok(session, 'a grantry session cookie');
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Lax');
  await Promise.all([alices.page.waitForURL(/\/demo\/authorize/), alices.page.click('button[type=submit]')]);
  await Promise.all([alices.page.waitForURL(/\/connected/), alices.page.click('button[value=approve]')]);
  assert.match(await alices.page.textContent('h1'), /Account connected/);
  await alices.context.close();

  const retry = await callListInvoices(base, {
    token,
    inputResponses: { [key]: { action: 'accept' } },
    requestState: first.requestState,
  });
  assert.equal(retry.resultType, 'complete');
  assert.equal(retry.structuredContent.invoices.length, 5);
});
