// `grantry bridge` as the stdio server of the official TypeScript SDK client and of MCP
// Inspector's CLI: tools/list, then list_invoices completes after a sign-in that the bridge
// opens with `--open-with` (tests/browser/open_link.mjs: headless Chromium signing in as a
// person would). Both identities: `dev`, and `oidc` against the test OpenID provider
// (tests/oidc/server.mjs), where the bridge first signs in at the issuer itself (MCP
// authorization). Run by `scripts/test bridge`, which names the opener in GRANTRY_OPEN_WITH
// and the provider in GRANTRY_OIDC_NODE and GRANTRY_OIDC_SERVER.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { record, logTo, traceEnv } from '../leaks.mjs';
import { BIN, startGrantry } from './support.mjs';

const OPENER = process.env.GRANTRY_OPEN_WITH;
if (!OPENER) throw new Error('GRANTRY_OPEN_WITH names the link opener: run this through `scripts/test bridge`');
// The installed tree is the folder above the tests' copy (tests/clients/run).
const here = fileURLToPath(new URL('..', import.meta.url));
const inspectorCli = join(here, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

/** A file for the opener's records, and a reader that waits (10 s at most) for `n` of them. */
function openerRecord() {
  const file = join(mkdtempSync(join(tmpdir(), 'grantry-bridge-')), 'opened.jsonl');
  writeFileSync(file, '');
  const read = async (n) => {
    for (let i = 0; i < 100; i++) {
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      if (lines.length >= n) return lines.map((l) => JSON.parse(l));
      await new Promise((r) => setTimeout(r, 100));
    }
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  };
  return { file, read };
}

/** The test OpenID provider, started; its issuer and a stop(). */
async function startProvider() {
  const child = spawn(process.env.GRANTRY_OIDC_NODE, [process.env.GRANTRY_OIDC_SERVER], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const line = await new Promise((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      if (seen.includes('\n')) resolve(seen.split('\n')[0]);
    });
    child.on('exit', () => reject(new Error('the OpenID provider exited')));
  });
  return { issuer: JSON.parse(line).issuer, stop: () => child.kill() };
}

/** grantry with this identity (oidc: against a provider of its own), and a stop(). */
async function startFor(identity) {
  if (identity === 'dev') return startGrantry();
  const provider = await startProvider();
  process.env.GRANTRY_OIDC_CLIENT_SECRET = 'grantry-secret';
  const grantry = await startGrantry(['--identity', 'oidc', '--oidc-issuer', provider.issuer,
    '--oidc-client-id', 'grantry', '--oidc-scopes', 'invoices', '--demo', 'true']);
  return { ...grantry, stop: () => { grantry.stop(); provider.stop(); } };
}

/** What the opener's pages end on: with oidc, the bridge's own sign-in at the issuer first. */
const expectedOutcomes = (identity) =>
  identity === 'oidc' ? ['Signed in', 'Account connected'] : ['Account connected'];

const bridgeArgs = (grantry, tokens) =>
  ['bridge', grantry.mcpUrl, '--open-with', OPENER, '--wait', '30', '--token-cache', tokens];
const scratch = () => mkdtempSync(join(tmpdir(), 'grantry-bridge-'));

/** The tokens a bridge cached in `dir`, kept for the leak search. */
function recordTokens(dir) {
  for (const name of readdirSync(dir)) {
    const kept = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    record('bridge token', [kept.access_token, kept.refresh_token]);
  }
}
const login = () => `alice-${Math.random().toString(36).slice(2, 10)}`;

for (const identity of ['dev', 'oidc']) {
  for (const era of ['legacy', 'modern']) {
    describe(`TypeScript SDK client over stdio, ${era} era, ${identity} identity`, () => {
      let grantry;
      before(async () => {
        grantry = await startFor(identity);
      });
      after(() => grantry.stop());

      test('tools/list, then list_invoices completes after the sign-in', async () => {
        const opened = openerRecord();
        const options = era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
        const client = new Client({ name: 'grantry-bridge-interop', version: '1' }, options);
        const tokens = scratch();
        await client.connect(new StdioClientTransport({
          command: BIN,
          args: bridgeArgs(grantry, tokens),
          env: { ...process.env, ...traceEnv(), GRANTRY_TEST_OPENED: opened.file, GRANTRY_TEST_LOGIN: login() },
          stderr: logTo('bridge', 'ignore'),
        }));
        assert.equal(client.getNegotiatedProtocolVersion(), era === 'legacy' ? '2025-11-25' : '2026-07-28');
        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === 'list_invoices'));
        const result = await client.callTool({ name: 'list_invoices', arguments: { status: 'all' } });
        assert.notEqual(result.isError, true, JSON.stringify(result));
        assert.equal(result.structuredContent.invoices.length, 5);
        await client.close();
        recordTokens(tokens);
        const records = await opened.read(expectedOutcomes(identity).length);
        assert.deepEqual(records.map((r) => r.outcome), expectedOutcomes(identity));
        assert.match(records.at(-1).link, new RegExp(`^${grantry.base}/connect/`));
      });
    });
  }
}

for (const identity of ['dev', 'oidc']) {
  describe(`MCP Inspector CLI launching the bridge, ${identity} identity`, () => {
    let grantry;
    before(async () => {
      grantry = await startFor(identity);
    });
    after(() => grantry.stop());

    /** Runs the Inspector CLI against a bridge as its stdio server; its JSON output. */
    async function inspector(opened, tokens, user, ...args) {
      const argv = [inspectorCli, '--cli', '--format', 'json', '-q', '-e', `GRANTRY_TEST_OPENED=${opened.file}`,
        '-e', `GRANTRY_TEST_LOGIN=${user}`, ...args, '--', BIN, ...bridgeArgs(grantry, tokens)];
      const { stdout } = await promisify(execFile)(process.execPath, argv, {
        env: { ...process.env, HOME: scratch() },
        timeout: 90_000,
      });
      return JSON.parse(stdout);
    }

    test('tools/list, then list_invoices completes after the sign-in', async () => {
      const [opened, tokens, user] = [openerRecord(), scratch(), login()];
      const listed = await inspector(opened, tokens, user, '--method', 'tools/list');
      assert.ok(listed.result.tools.some((t) => t.name === 'list_invoices'), JSON.stringify(listed));
      const called = await inspector(opened, tokens, user,
        '--method', 'tools/call', '--tool-name', 'list_invoices', '--tool-arg', 'status=all');
      assert.notEqual(called.result.isError, true, JSON.stringify(called));
      assert.equal(called.result.structuredContent.invoices.length, 5);
      recordTokens(tokens);
      const records = await opened.read(expectedOutcomes(identity).length);
      assert.deepEqual(records.map((r) => r.outcome), expectedOutcomes(identity));
    });
  });
}
