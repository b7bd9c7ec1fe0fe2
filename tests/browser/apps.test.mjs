// The connect card in a real MCP Apps host: the official host library (ext-apps' AppBridge,
// tests/browser/apps_host.mjs) in a page of headless Chromium, against grantry as a client
// that declares only the UI extension (as claude.ai and ChatGPT do) would reach it. The card
// renders, Connect opens grantry's connect page through ui/open-link, the person signs in,
// the card notices and sends its message, and the retried call returns invoices; a second
// account through the card; the card in German; its CSP; nothing secret in what the card got.
// A screenshot of the card at 360 px goes to $GRANTRY_SCREENSHOTS/apps.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { launchChromium, startGrantry, stopAll } from './support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const shots = join(process.env.GRANTRY_SCREENSHOTS ?? join(tmpdir(), 'grantry-screenshots'), 'apps');
const APPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
const APPS_AND_TASKS = { extensions: { ...APPS.extensions, 'io.modelcontextprotocol/tasks': {} } };
let browser;
let hostUrl;
let hostServer;

before(async () => {
  browser = await launchChromium();
  mkdirSync(shots, { recursive: true });
  const bundle = await build({
    entryPoints: [join(here, 'apps_host.mjs')], bundle: true, format: 'iife', write: false,
    platform: 'browser', target: 'chrome120', logLevel: 'error',
  });
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>host</title></head>`
    + `<body style="margin:0;padding:12px;background:#eef0f4">`
    + `<script>${bundle.outputFiles[0].text}</script></body></html>`;
  // Port 0: the system picks a free one, held from then on (one found free and let go could
  // be another process's by the time the page is served).
  hostServer = createServer((_, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(page);
  });
  await new Promise((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
  hostUrl = `http://127.0.0.1:${hostServer.address().port}/`;
});

after(async () => {
  await browser?.close();
  hostServer?.close();
  stopAll();
});

/** One 2026-07-28 request from the host's client, which declares the UI extension alone
 * (or what `capabilities` says). */
async function rpc(base, method, params = {}, capabilities = APPS) {
  const name = params.name ?? params.uri ?? params.taskId;
  const provider = params.arguments?.provider;
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
      ...(provider ? { 'mcp-param-provider': provider } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0', id: 1, method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': capabilities,
          'io.modelcontextprotocol/clientInfo': { name: 'grantry-ci-host', version: '1' },
        },
      },
    }),
  });
  const answer = await response.json();
  assert.ok(answer.result, `${method}: ${JSON.stringify(answer)}`);
  return answer.result;
}

/** The card's HTML and CSP, as a host fetches them from connect_account's tool entry. */
async function cardResource(base) {
  const { tools } = await rpc(base, 'tools/list');
  const tool = tools.find((t) => t.name === 'connect_account');
  const { contents } = await rpc(base, 'resources/read', { uri: tool._meta.ui.resourceUri });
  return { html: contents[0].text, csp: contents[0]._meta.ui.csp };
}

/** A host page with the card rendered for a connect_account call; and the card's frame. */
async function showCard(base, { locale = 'en-US' } = {}) {
  const args = { provider: 'demo' };
  const result = await rpc(base, 'tools/call', { name: 'connect_account', arguments: args });
  const context = await browser.newContext({ viewport: { width: 360, height: 640 } });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => /Refused to|Uncaught|Error/.test(m.text()) && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.exposeFunction('mcp', (method, params) => rpc(base, method, params));
  await page.goto(hostUrl);
  const { html, csp } = await cardResource(base);
  await page.evaluate((card) => window.mount(card), { html, csp, args, result, locale });
  return { page, context, card: page.frameLocator('#app'), problems, result };
}

/** The link the card asked the host to open, once it has. */
async function openedLink(page) {
  await page.waitForFunction(() => window.log.some((entry) => entry.openLink));
  return page.evaluate(() => window.log.find((entry) => entry.openLink).openLink);
}

/** The person's browser: grantry's connect page, Continue, the demo's consent as `user`. */
async function signIn(url, user) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  await Promise.all([page.waitForURL(/\/demo\/authorize/), page.click('button[type=submit]')]);
  await page.fill('input[name=user]', user);
  await Promise.all([page.waitForURL(/\/connected/), page.click('button[value=approve]')]);
  assert.match(await page.textContent('h1'), /Account connected/);
  // The card's link: its page sends the person back to the card, naming the account.
  assert.match(await page.textContent('.next-step'), /press Continue on its connect card/);
  assert.equal(await page.textContent('.account'), user);
  await context.close();
}

/** The card's frame has come to its content's height (the card told the host its size, and
 * the host follows it: apps_host.mjs), and the card neither scrolls nor leaves space below. */
async function fitsItsContent(page, card, label) {
  let seen;
  for (let tries = 0; tries < 50; tries++) {
    const frame = (await page.locator('#app').boundingBox()).height;
    const content = (await card.locator('body').boundingBox()).height;
    const scrolls = await card.locator('html').evaluate((html) => html.scrollHeight > html.clientHeight);
    seen = { frame, content, scrolls };
    if (Math.abs(frame - Math.ceil(content)) <= 1 && !scrolls) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`${label}: the card's frame does not fit its content: ${JSON.stringify(seen)}`);
}

/** The message the card sent into the conversation, once it has. */
async function sentMessage(page) {
  await page.waitForFunction(() => window.log.some((entry) => entry.message));
  return page.evaluate(() => window.log.find((entry) => entry.message).message);
}

test('a host that renders apps connects an account through the card, and the call completes', async () => {
  const base = await startGrantry();
  const refused = await rpc(base, 'tools/call', { name: 'list_invoices', arguments: {} });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /connect_account/);

  const { page, context, card, problems } = await showCard(base);
  const connect = card.getByRole('button', { name: 'Connect Demo Billing' });
  await connect.waitFor();
  await fitsItsContent(page, card, 'connect');
  await page.locator('#app').screenshot({ path: join(shots, 'connect-card-360.png') });
  await connect.click();
  const link = await openedLink(page);
  assert.ok(link.startsWith(`${base}/connect/`), link);
  await card.getByText(/sign-in page is opening/).waitFor();

  await signIn(link, 'alice');
  const go = card.getByRole('button', { name: 'Continue' });
  await go.waitFor({ timeout: 15000 });
  await card.getByText(/Demo Billing account alice is connected/).waitFor();
  await fitsItsContent(page, card, 'connected');
  await page.locator('#app').screenshot({ path: join(shots, 'connect-card-connected-360.png') });
  await go.click();
  const message = await sentMessage(page);
  // Shorter now (its button gone): the frame shrinks with it.
  await card.getByText(/^Sent\./).waitFor();
  await fitsItsContent(page, card, 'sent');
  assert.equal(message.role, 'user');
  assert.match(message.content[0].text, /connected my Demo Billing account alice/);

  const retried = await rpc(base, 'tools/call', { name: 'list_invoices', arguments: {} });
  assert.equal(retried.isError, false, JSON.stringify(retried));
  assert.ok(retried.structuredContent.invoices.length > 0);
  assert.deepEqual(problems, [], 'no CSP refusal or script error in the host page');
  await context.close();
});

test('a host that takes tasks gets one that waits on the card and completes as the person connects', async () => {
  const base = await startGrantry();
  const call = (method, params) => rpc(base, method, params, APPS_AND_TASKS);
  const made = await call('tools/call', { name: 'list_invoices', arguments: {} });
  assert.equal(made.resultType, 'task', JSON.stringify(made));
  assert.equal(made.status, 'working', JSON.stringify(made));
  const waiting = await call('tasks/get', { taskId: made.taskId });
  assert.equal(waiting.status, 'working', 'the card, not the host, takes the person through');
  assert.equal(waiting.inputRequests, undefined, 'no link request for a host that shows none');
  assert.match(waiting.statusMessage, /connect_account with \{"provider":"demo"\}/);
  const again = await call('tasks/get', { taskId: made.taskId });
  assert.equal(again.statusMessage, waiting.statusMessage, 'the same link at every poll');
  assert.equal(again.lastUpdatedAt, waiting.lastUpdatedAt, 'a poll changes nothing');

  const { page, context, card, problems } = await showCard(base);
  await card.getByRole('button', { name: 'Connect Demo Billing' }).click();
  await signIn(await openedLink(page), 'alice');
  await card.getByRole('button', { name: 'Continue' }).waitFor({ timeout: 15000 });

  // The sign-in itself completed the task: its first poll since has the invoices.
  const done = await call('tasks/get', { taskId: made.taskId });
  assert.equal(done.status, 'completed', JSON.stringify(done));
  assert.equal(done.result.isError, false);
  assert.ok(done.result.structuredContent.invoices.length > 0);
  assert.deepEqual(problems, [], 'no CSP refusal or script error in the host page');
  await context.close();
});

test('a second account through the card, and nothing secret in what the card was given', async () => {
  const base = await startGrantry();
  const first = await rpc(base, 'tools/call', { name: 'connect_account', arguments: {} });
  await signIn(first._meta['grantry/connect'].url, 'alice');

  const { page, context, card, problems } = await showCard(base);
  await card.getByText('Demo Billing is connected.').waitFor();
  await fitsItsContent(page, card, 'accounts');
  await page.locator('#app').screenshot({ path: join(shots, 'connect-card-accounts-360.png') });
  await card.getByRole('button', { name: 'Connect another account' }).click();
  await signIn(await openedLink(page), 'bob');
  await card.getByRole('button', { name: 'Continue' }).click({ timeout: 15000 });
  assert.match((await sentMessage(page)).content[0].text, /account bob/);

  // What the host handed the card: the tool's input and result, the status polls' answers.
  const handed = JSON.stringify(await page.evaluate(() => window.handed));
  assert.ok(handed.includes('connection_id'), handed.slice(0, 300));
  assert.doesNotMatch(handed, /requestState|access_token|refresh_token|verifier|"ticket/i);
  // The sealed values it got are connect links' tickets (the card's, and the one in the words
  // for a host that shows no card), which work only for their person.
  const sealed = new Set(handed.match(/g1\.[\w-]+/g));
  const links = new Set([...handed.matchAll(/\/connect\/(g1\.[\w-]+)/g)].map((m) => m[1]));
  assert.equal(links.size, 2);
  assert.deepEqual(sealed, links, 'no sealed value but the connect links');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the card speaks the host\'s language', async () => {
  const base = await startGrantry();
  const { context, card } = await showCard(base, { locale: 'de-DE' });
  await card.getByRole('button', { name: 'Demo Billing verbinden' }).waitFor();
  assert.equal(await card.locator('html').getAttribute('lang'), 'de');
  await context.close();
});
