// oidc identity in a real browser (headless Chromium) against a real OpenID Connect provider
// (oidc-provider, tests/oidc): the connect page sends a browser with no session to the
// issuer's login and back to the same page; another user is refused; the owner finishes.
// Then /connections with two Xero organisations (a fake Xero, xero_fake.mjs): one
// disconnected and revoked at Xero, the other reconnected in place; another user sees none of
// them, and forged POSTs (his token, no token, another site) change nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ORGANISATIONS, startXeroFake } from './xero_fake.mjs';
import {
  callListInvoices, launchChromium, oidcIdentity, startGrantry, startOidcProvider, stopAll,
} from './support.mjs';

let browser;
let issuer;

/** grantry with `oidc` identity at the test's issuer, and the demo provider. */
async function startOidcGrantry() {
  const { args, env } = oidcIdentity(issuer);
  return startGrantry([...args, '--demo', 'true'], env);
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
  issuer = await startOidcProvider();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  stopAll();
});

test('oidc: another user is refused at the connect page and the caller finishes', async () => {
  const base = await startOidcGrantry();
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

test('oidc: two Xero organisations, one disconnected and one reconnected; another user sees and forges nothing', async () => {
  const xero = await startXeroFake();
  const dir = mkdtempSync(join(tmpdir(), 'grantry-xero-'));
  const catalog = join(dir, 'providers.toml');
  writeFileSync(catalog, xero.catalog());
  const { args, env } = oidcIdentity(issuer);
  const base = await startGrantry([...args, '--providers', catalog], { ...env, FAKE_SECRET: xero.secret });
  const [first, second] = ORGANISATIONS.map((o) => o.tenantName);

  /** A browser of its own for `user`, logged in at the issuer from /connections. */
  const login = async (user) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/connections`);
    assert.match(page.url(), /\/interaction\//, 'no session: the issuer asks who is there');
    await page.fill('input[name=login]', user);
    await Promise.all([page.waitForURL(`${base}/connections`), page.click('button[type=submit]')]);
    return { context, page };
  };
  /** From /connections, the link named `words`, Continue, then `organisation` at Xero. */
  const signIn = async (page, words, organisation) => {
    await page.goto(`${base}/connections`);
    await Promise.all([page.waitForURL(/\/connect\//), page.click(`text="${words}"`)]);
    await Promise.all([page.waitForURL(/\/oauth\/authorize/), page.click('button[type=submit]')]);
    await Promise.all([page.waitForURL(/\/connected/), page.click(`text="${organisation}"`)]);
  };
  const disconnectLink = (page, organisation) =>
    page.getAttribute(`a:text-is("Disconnect Xero (${organisation})")`, 'href');
  /** A POST of `fields` with the browser's cookies (as a script or a tool would forge it); its status. */
  const post = async (page, action, fields) =>
    (await page.context().request.post(action, { form: fields, maxRedirects: 0 })).status();

  const alice = await login(`alice-${randomBytes(4).toString('hex')}`);
  await signIn(alice.page, 'Connect Xero', first);
  await signIn(alice.page, 'Connect another Xero account', second);
  await alice.page.goto(`${base}/connections`);
  const both = await alice.page.textContent('main');
  assert.match(both, new RegExp(`Xero: ${first.replace(/[()]/g, '\\$&')}`));
  assert.match(both, new RegExp(`Xero: ${second.replace(/[()]/g, '\\$&')}`));
  const firstForm = `${base}${await disconnectLink(alice.page, first)}`;
  const secondLink = await disconnectLink(alice.page, second);

  // Another user: none of Alice's, and Alice's connection is no one's to him.
  const bob = await login(`bob-${randomBytes(4).toString('hex')}`);
  assert.match(await bob.page.textContent('main'), /You have no connections/);
  assert.equal((await bob.page.goto(firstForm)).status(), 404);
  await signIn(bob.page, 'Connect Xero', first);
  await bob.page.goto(`${base}/connections`);
  await Promise.all([bob.page.waitForURL(/\/disconnect$/), bob.page.click('a:text-matches("^Disconnect Xero")')]);
  const bobs = {
    csrf: await bob.page.getAttribute('input[name=csrf]', 'value'),
    connected_at: await bob.page.getAttribute('input[name=connected_at]', 'value'),
  };
  assert.equal(await post(bob.page, firstForm, bobs), 404, "his own form token for her connection");

  // Alice's form: without its token, and from another site with it, refused.
  await alice.page.goto(firstForm);
  const hers = {
    csrf: await alice.page.getAttribute('input[name=csrf]', 'value'),
    connected_at: await alice.page.getAttribute('input[name=connected_at]', 'value'),
  };
  assert.equal(await post(alice.page, firstForm, { connected_at: hers.connected_at }), 403);
  const elsewhere = await alice.context.newPage();
  await elsewhere.goto(`${xero.base}/elsewhere`);
  const [crossSite] = await Promise.all([
    elsewhere.waitForResponse((r) => r.url() === firstForm),
    elsewhere.evaluate(([action, fields]) => {
      const form = Object.assign(document.createElement('form'), { method: 'POST', action });
      for (const [name, value] of Object.entries(fields)) {
        form.append(Object.assign(document.createElement('input'), { type: 'hidden', name, value }));
      }
      document.body.append(form);
      form.submit();
    }, [firstForm, hers]),
  ]);
  assert.equal(crossSite.status(), 403);
  assert.deepEqual(xero.revoked, [], 'nothing was revoked by any of these');

  // Confirmed: the first organisation's grant, and only it, is revoked at Xero.
  await Promise.all([alice.page.waitForLoadState('load'), alice.page.click('button[type=submit]')]);
  await alice.page.waitForSelector('.notice');
  assert.match(await alice.page.textContent('.notice'), /^Disconnected Xero\. Xero confirmed/);
  assert.deepEqual(xero.revoked, ['tenant-1']);

  // The other is reconnected in place: the same connection.
  await signIn(alice.page, `Reconnect Xero (${second})`, second);
  await alice.page.goto(`${base}/connections`);
  const left = await alice.page.textContent('main');
  assert.doesNotMatch(left, new RegExp(first.replace(/[()]/g, '\\$&')));
  assert.equal(await disconnectLink(alice.page, second), secondLink);
  // Bob's own grant at the first organisation is untouched.
  await bob.page.goto(`${base}/connections`);
  assert.match(await bob.page.textContent('main'), /Xero: Demo Company \(UK\)/);
  assert.deepEqual(xero.revoked, ['tenant-1']);
  await alice.context.close();
  await bob.context.close();
  xero.close();
});
