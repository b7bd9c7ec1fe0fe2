// mcp-remote, the stdio proxy many desktop clients use for remote servers, in its default
// (legacy era) mode, against grantry with `oidc` identity: it authorizes at the OpenID
// provider itself (MCP authorization: the protected resource's metadata, dynamic client
// registration, PKCE), then relays grantry's -32042 to the stdio client, whose person signs
// in at the connect page; the retried call returns invoices.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';

import { recordUrl } from '../leaks.mjs';
import { assertConnected, startGrantry, walk } from '../clients/support.mjs';

const proxy = createRequire(import.meta.url).resolve('mcp-remote/dist/proxy.js');

/** The test OpenID provider (tests/oidc/server.mjs), started; its issuer and a stop(). */
async function startProvider() {
  const child = spawn(process.env.GRANTRY_OIDC_NODE, [process.env.GRANTRY_OIDC_SERVER], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const line = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return { issuer: JSON.parse(line).issuer, stop: () => child.kill() };
}

/** mcp-remote on `url`: JSON-RPC over its stdio, and its person. Its callback port is its own
 * choice, as when a desktop client starts it: it binds the port its sign-in uses (one derived
 * from the URL, else the next that is free) and holds it meanwhile. A port found free here and
 * let go could be another process's by the time it binds it, and given one it only fails. */
function startProxy(url) {
  const child = spawn(process.execPath, [proxy, url, '--host', '127.0.0.1'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its tokens in a scratch folder; it opens no browser (the person below follows the link).
    env: { ...process.env, MCP_REMOTE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'grantry-mcp-remote-')), BROWSER: 'true' },
  });
  const authorized = new Promise((resolve, reject) => {
    createInterface({ input: child.stderr }).on('line', (line) => {
      const url = line.trim();
      if (!/^https?:\/\/\S+\?\S*redirect_uri=/.test(url)) return;
      recordUrl(url);
      walk(url, { login: 'alice' }).then(resolve, reject);
    });
  });
  const waiting = new Map();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  let id = 0;
  const request = (method, params) => new Promise((resolve) => {
    waiting.set(++id, resolve);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
  const notify = (method) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  return { request, notify, authorized, stop: () => child.kill() };
}

test('mcp-remote authorizes at the issuer, then relays the sign-in, legacy era', { timeout: 120_000 }, async () => {
  const provider = await startProvider();
  const grantry = await startGrantry(
    ['--identity', 'oidc', '--oidc-issuer', provider.issuer, '--oidc-client-id', 'grantry', '--demo', 'true'],
    { GRANTRY_OIDC_CLIENT_SECRET: 'grantry-secret' },
  );
  const remote = startProxy(grantry.mcpUrl);
  try {
    const initialized = remote.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: { form: {}, url: {} } },
      clientInfo: { name: 'grantry-ci-desktop', version: '1' },
    });
    const callback = await remote.authorized;
    assert.equal(callback.status, 200, callback.text);
    assert.match(callback.text, /Authorization successful/);
    assert.equal((await initialized).result.protocolVersion, '2025-11-25');
    remote.notify('notifications/initialized');
    const { result } = await remote.request('tools/list', {});
    assert.ok(result.tools.some((tool) => tool.name === 'list_invoices'));

    const call = { name: 'list_invoices', arguments: {} };
    const refused = await remote.request('tools/call', call);
    assert.equal(refused.error?.code, -32042, JSON.stringify(refused));
    const [{ url }] = refused.error.data.elicitations;
    assert.ok(refused.error.message.includes(url), 'the link is in the message too');
    assertConnected(await walk(url, { login: 'alice' }));
    const again = await remote.request('tools/call', call);
    assert.ok(again.result?.structuredContent?.invoices?.length > 0, JSON.stringify(again));
  } finally {
    remote.stop();
    grantry.stop();
    provider.stop();
  }
});
