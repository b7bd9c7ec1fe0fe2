// The sign-in in a real browser (headless Chromium): the connect page, Continue, the demo
// provider's consent, the callback and the "connected" page; then the MCP retry completes.
// A second test forwards the provider authorize URL to another browser, which must be stopped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callListInvoices, launchChromium, startGrantry, stopAll } from './support.mjs';

let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  stopAll();
});

test('a person signs in and the retried call returns invoices', async () => {
  const base = await startGrantry(['--retry-hold', '5']);
  const first = await callListInvoices(base);
  assert.equal(first.resultType, 'input_required');
  const [key, request] = Object.entries(first.inputRequests)[0];
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(request.params.url);
  assert.match(await page.textContent('main'), /Signed in as\s*local-user/);
  await Promise.all([page.waitForURL(/\/demo\/authorize/), page.click('button[type=submit]')]);
  await Promise.all([page.waitForURL(/\/connected/), page.click('button[value=approve]')]);
  assert.match(await page.textContent('h1'), /Account connected/);
  assert.doesNotMatch(page.url(), /code=|state=/);
  await context.close();

  const retry = await callListInvoices(base, {
    inputResponses: { [key]: { action: 'accept' } },
    requestState: first.requestState,
  });
  assert.equal(retry.resultType, 'complete');
  assert.equal(retry.structuredContent.invoices.length, 5);
});

test('an authorize URL forwarded to another browser is stopped at the callback', async () => {
  const base = await startGrantry(['--retry-hold', '5']);
  const first = await callListInvoices(base);
  assert.equal(first.resultType, 'input_required');
  const [, request] = Object.entries(first.inputRequests)[0];
  const attacker = await browser.newContext();
  const attackerPage = await attacker.newPage();
  await attackerPage.goto(request.params.url);
  await Promise.all([attackerPage.waitForURL(/\/demo\/authorize/), attackerPage.click('button[type=submit]')]);
  const authorizeUrl = attackerPage.url();
  const victim = await browser.newContext();
  const victimPage = await victim.newPage();
  await victimPage.goto(authorizeUrl);
  await Promise.all([victimPage.waitForURL(/\/oauth\/callback/), victimPage.click('button[value=approve]')]);
  assert.match(await victimPage.textContent('h1'), /started in another browser/);
  await attacker.close();
  await victim.close();
});

// Where the pages' screenshots go (CI keeps the folder as an artifact).
const shots = process.env.GRANTRY_SCREENSHOTS ?? join(tmpdir(), 'grantry-screenshots');

/** Full-page screenshots of `page` at a phone's and a desktop's width. */
async function screenshots(page, name) {
  mkdirSync(shots, { recursive: true });
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
  }
}

/** Presses Tab until the focused element matches `wanted` (at most 20 times). */
async function tabTo(page, wanted) {
  for (let i = 0; i < 20; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(`(${wanted})(document.activeElement)`)) return;
  }
  throw new Error(`no focusable element matches ${wanted}`);
}

test('a person finds the connection, and disconnects it with the keyboard alone', async () => {
  const base = await startGrantry(['--retry-hold', '5']);
  const first = await callListInvoices(base);
  const [, request] = Object.entries(first.inputRequests)[0];
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(request.params.url);
  await Promise.all([page.waitForURL(/\/demo\/authorize/), page.click('button[type=submit]')]);
  await Promise.all([page.waitForURL(/\/connected/), page.click('button[value=approve]')]);

  // From the "connected" page to the connections page, by its link.
  await Promise.all([page.waitForURL(/\/connections$/), page.click('text=See and manage your connections')]);
  assert.match(await page.textContent('main'), /Demo Billing[\s\S]*Working/);
  await screenshots(page, 'connections');

  // Keyboard only: Tab to Disconnect, Enter; on the confirmation, Tab to its button, Enter.
  await tabTo(page, (el) => el.tagName === 'A' && el.textContent.startsWith('Disconnect'));
  await Promise.all([page.waitForURL(/\/disconnect$/), page.keyboard.press('Enter')]);
  assert.match(await page.textContent('h1'), /Disconnect Demo Billing/);
  await screenshots(page, 'confirm-disconnect');
  await tabTo(page, (el) => el.tagName === 'BUTTON');
  await Promise.all([page.waitForLoadState('load'), page.keyboard.press('Enter')]);
  await page.waitForSelector('text=You have no connections');
  assert.match(await page.textContent('.notice'), /^Disconnected Demo Billing/);
  await context.close();

  // The assistant's next call asks to connect again.
  const again = await callListInvoices(base);
  assert.equal(again.resultType, 'input_required');
});
