// An API key typed on grantry's own page, in headless Chromium: a list_invoices at Paddle (a
// fake in this process, paddle_fake.mjs, that checks the key as Paddle does) answers with a
// link; the page shows a key form (a password field nothing autocompletes, no axe violation,
// in English and German, fitting 360 px); a wrong key is refused by the provider and stores
// nothing, the field left empty; the right key lands on "Account connected", the retried call
// returns the invoices, /connections shows Paddle, and its disconnect forgets the key.
// Screenshots go to $GRANTRY_SCREENSHOTS/api-keys.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { record } from '../leaks.mjs';
import { PADDLE_KEY, startPaddleFake } from './paddle_fake.mjs';
import {
  callListInvoices, checkPage, launchChromium, startGrantry, stopAll, submitAndLoad,
} from './support.mjs';

const shots = join(process.env.GRANTRY_SCREENSHOTS ?? join(tmpdir(), 'grantry-screenshots'), 'api-keys');
const WRONG_KEY = 'pdl_sdbx_apikey_01jwrongkey_theFakeRefusesThisOne9';
const AT_PADDLE = { arguments: { provider: 'paddle', status: 'all' } };
let browser;
let paddle;

before(async () => {
  browser = await launchChromium();
  paddle = await startPaddleFake();
  mkdirSync(shots, { recursive: true });
  record('api key', [PADDLE_KEY, WRONG_KEY]);
});

after(async () => {
  await browser?.close();
  paddle?.close();
  stopAll();
});

/** grantry offering Paddle at the fake (the demo provider first). */
async function grantryWithPaddle() {
  const dir = mkdtempSync(join(tmpdir(), 'grantry-keys-'));
  const catalog = join(dir, 'providers.toml');
  writeFileSync(catalog, `default = "demo"\n[providers.paddle]\napi_base = "${paddle.base}"\n`);
  return startGrantry(['--providers', catalog, '--retry-hold', '5']);
}

const check = (page, name) => checkPage(page, shots, name);

test('a key typed on the connect page is checked, stored, used and forgotten', async () => {
  const base = await grantryWithPaddle();
  const first = await callListInvoices(base, AT_PADDLE);
  assert.equal(first.resultType, 'input_required');
  const [answer, request] = Object.entries(first.inputRequests)[0];
  const context = await browser.newContext({ bypassCSP: true }); // to inject axe-core
  const page = await context.newPage();
  await page.goto(request.params.url);
  const field = page.locator('input[name=api_key]');
  assert.equal(await field.getAttribute('type'), 'password');
  assert.equal(await field.getAttribute('autocomplete'), 'off');
  assert.equal(new URL(page.url()).origin, base, 'the form is on grantry\'s own origin');
  await check(page, 'form');

  // A wrong key: the provider refuses it, the form says so, and the field is empty again.
  // Read on the page that answered (not the form it was typed in, where the key still is).
  await field.fill(WRONG_KEY);
  const refused = await submitAndLoad(page, 'button[type=submit]', /\/key$/);
  assert.equal(refused.status(), 400);
  assert.doesNotMatch(await refused.text(), new RegExp(WRONG_KEY), 'not sent back');
  assert.match(await page.textContent('main'), /Paddle refused this key/);
  assert.equal(await page.locator('input[name=api_key]').inputValue(), '');
  assert.doesNotMatch(await page.content(), new RegExp(WRONG_KEY));
  assert.equal(paddle.seen.refused, 1);
  await check(page, 'refused');

  // The right key: connected, and the retried call reads with it.
  await page.locator('input[name=api_key]').fill(PADDLE_KEY);
  await Promise.all([page.waitForURL(/\/connected/), page.click('button[type=submit]')]);
  assert.match(await page.textContent('h1'), /Account connected/);
  // Asked for by a client that showed the link: its call goes on by itself.
  assert.match(await page.textContent('.next-step'), /it will continue on its own/);
  const retry = await callListInvoices(base, {
    ...AT_PADDLE,
    inputResponses: { [answer]: { action: 'accept' } },
    requestState: first.requestState,
  });
  assert.equal(retry.resultType, 'complete');
  assert.equal(retry.structuredContent.invoices.length, 3);

  // On /connections, and disconnecting forgets the key (it stays valid at Paddle).
  await page.goto(`${base}/connections`);
  assert.match(await page.textContent('main'), /Paddle/);
  await Promise.all([page.waitForURL(/\/disconnect$/), page.click('a[href$="/disconnect"]')]);
  assert.match(await page.textContent('main'), /stays valid at Paddle until you delete it there/);
  const disconnected = await submitAndLoad(page, 'button[type=submit]', /\/disconnect$/);
  assert.equal(disconnected.status(), 200);
  assert.match(await page.textContent('main'), /has forgotten the API key/);
  assert.match(await page.textContent('main'), /You have no connections/);
  const again = await callListInvoices(base, AT_PADDLE);
  assert.equal(again.resultType, 'input_required', 'the next call asks for a key again');
  await context.close();
});

test('the key form speaks the reader\'s language', async () => {
  const base = await grantryWithPaddle();
  const first = await callListInvoices(base, AT_PADDLE);
  const [, request] = Object.entries(first.inputRequests)[0];
  const context = await browser.newContext({
    bypassCSP: true,
    locale: 'de',
    extraHTTPHeaders: { 'accept-language': 'de' },
  });
  const page = await context.newPage();
  await page.goto(request.params.url);
  assert.equal(await page.getAttribute('html', 'lang'), 'de');
  assert.match(await page.textContent('main'), /API-Schlüssel von Paddle/);
  await check(page, 'form-de');
  await context.close();
});
