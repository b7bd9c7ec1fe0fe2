// What the browser test files share: Debian's Chromium, grantry and the
// OpenID Connect provider started (and stopped), and a tools/call of list_invoices as an MCP
// 2026-07-28 client (optionally with a bearer token).
import { execFileSync, spawn } from 'node:child_process';
import { rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { spawnGrantry } from '../grantry.mjs';
import { logTo, record, recordUrl } from '../leaks.mjs';

const processes = [];

/** Stops every process the helpers below started. */
export const stopAll = () => {
  for (const child of processes) child.kill();
};

/**
 * Starts grantry (the demo provider, SQLite in a temp dir) with `args` after its listen
 * address and data directory, and `env` added; returns its base URL once it answers.
 */
export async function startGrantry(args = [], env = {}) {
  const log = logTo('browser', 'ignore');
  const { base, child } = await spawnGrantry(process.env.GRANTRY_BIN, { args, env, log, prefix: 'grantry-browser-' });
  processes.push(child);
  return base;
}

/** Starts the pinned OpenID Connect provider (installed by tests/oidc/install); its issuer. */
export async function startOidcProvider() {
  const oidcDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'oidc');
  const deps = execFileSync(join(oidcDir, 'install'), { encoding: 'utf8' }).trim().split('\n').pop();
  rmSync(join(oidcDir, 'node_modules'), { force: true });
  symlinkSync(join(deps, 'node_modules'), join(oidcDir, 'node_modules'));
  const child = spawn(join(deps, 'node_modules/.bin/node'), [join(oidcDir, 'server.mjs')], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  processes.push(child);
  const line = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return JSON.parse(line).issuer;
}

/** grantry's flags and environment for `oidc` identity at `issuer`. */
export const oidcIdentity = (issuer) => ({
  args: ['--identity', 'oidc', '--oidc-issuer', issuer, '--oidc-client-id', 'grantry'],
  env: { GRANTRY_OIDC_CLIENT_SECRET: 'grantry-secret' },
});

/** Debian's Chromium, headless, with nothing running in the background. Every context it
 * opens keeps the secrets it meets (URLs' codes, states and tickets; cookies) for the leak
 * search. */
export async function launchChromium() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...options) => watched(await newContext(...options));
  return browser;
}

function watched(context) {
  context.on('request', (request) => recordUrl(request.url()));
  context.on('response', async (response) => {
    const cookies = (await response.headerValue('set-cookie').catch(() => null)) ?? '';
    record('cookie', cookies.split('\n').map((c) => c.split(';')[0].split('=').slice(1).join('=')));
  });
  return context;
}

/** Calls list_invoices { status: 'all' } with `extra` params; returns the JSON-RPC result. */
export async function callListInvoices(base, { token, ...extra } = {}) {
  // list_invoices mirrors its `provider` argument into a header (its x-mcp-header).
  const provider = extra.arguments?.provider;
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(provider ? { 'mcp-param-provider': provider } : {}),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'list_invoices',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'list_invoices',
        arguments: { status: 'all' },
        ...extra,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {}, url: {} } },
        },
      },
    }),
  });
  const text = await response.text();
  const json = text.startsWith('{') ? text : text.split('\n').filter((l) => l.startsWith('data: ')).pop().slice(6);
  return JSON.parse(json).result;
}

/**
 * Clicks `selector` (a form's submit button) and waits for the page that answers the POST to a
 * URL matching `path`: a new document, loaded. The document clicked in is marked first and the
 * wait ends only once it is gone, so what is read next is the answer, never the page the
 * button was on (whose `load` has long fired, so waiting for `load` alone can end at once).
 * Returns the POST's response.
 */
export async function submitAndLoad(page, selector, path) {
  await page.evaluate(() => { window.grantryOldDocument = true; });
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && path.test(r.url())),
    page.click(selector),
  ]);
  await page.waitForFunction(() => !window.grantryOldDocument);
  await page.waitForLoadState('load');
  return response;
}

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core's violations on the page as it is, as readable lines (its context must bypass CSP). */
export async function violations(page) {
  await page.addScriptTag({ path: axePath });
  const result = await page.evaluate(() => window.axe.run(document));
  return result.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help}; ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
  );
}

/**
 * Checks the page at a phone's and a desktop's width (no axe violation, nothing wider than the
 * screen) and writes its screenshots into `dir` as `name`.
 */
export async function checkPage(page, dir, name) {
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    assert.deepEqual(await violations(page), [], `${name} at ${width} px`);
    const wider = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    assert.equal(wider, false, `${name} scrolls sideways at ${width} px`);
    await page.screenshot({ path: join(dir, `${name}-${width}.png`), fullPage: true });
  }
}
