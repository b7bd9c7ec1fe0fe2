// `grantry bridge` as the stdio server of the official TypeScript SDK client and of MCP
// Inspector's CLI: tools/list, then list_invoices completes after a sign-in that the bridge
// opens with `--open-with` (tests/browser/open_link.mjs: headless Chromium signing in as a
// person would). Run by `scripts/test bridge`, which names that opener in GRANTRY_OPEN_WITH.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { BIN, startGrantry } from './support.mjs';

const OPENER = process.env.GRANTRY_OPEN_WITH;
if (!OPENER) throw new Error('GRANTRY_OPEN_WITH names the link opener: run this through `scripts/test bridge`');
const here = fileURLToPath(new URL('.', import.meta.url));
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

const bridgeArgs = (grantry) => ['bridge', grantry.mcpUrl, '--open-with', OPENER, '--wait', '30'];

for (const era of ['legacy', 'modern']) {
  describe(`TypeScript SDK client over stdio, ${era} era`, () => {
    let grantry;
    before(async () => {
      grantry = await startGrantry();
    });
    after(() => grantry.stop());

    test('tools/list, then list_invoices completes after the sign-in', async () => {
      const opened = openerRecord();
      const options = era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
      const client = new Client({ name: 'grantry-bridge-interop', version: '1' }, options);
      await client.connect(new StdioClientTransport({
        command: BIN,
        args: bridgeArgs(grantry),
        env: { ...process.env, GRANTRY_TEST_OPENED: opened.file },
        stderr: 'ignore',
      }));
      assert.equal(client.getNegotiatedProtocolVersion(), era === 'legacy' ? '2025-11-25' : '2026-07-28');
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'list_invoices'));
      const result = await client.callTool({ name: 'list_invoices', arguments: { status: 'all' } });
      assert.notEqual(result.isError, true, JSON.stringify(result));
      assert.equal(result.structuredContent.invoices.length, 5);
      await client.close();
      const [record] = await opened.read(1);
      assert.match(record.link, new RegExp(`^${grantry.base}/connect/`));
      assert.equal(record.outcome, 'Account connected');
    });
  });
}

describe('MCP Inspector CLI launching the bridge', () => {
  let grantry;
  before(async () => {
    grantry = await startGrantry();
  });
  after(() => grantry.stop());

  /** Runs the Inspector CLI against the bridge as its stdio server; its JSON output. */
  async function inspector(opened, ...args) {
    const argv = [inspectorCli, '--cli', '--format', 'json', '-q', '-e', `GRANTRY_TEST_OPENED=${opened.file}`,
      ...args, '--', BIN, ...bridgeArgs(grantry)];
    const { stdout } = await promisify(execFile)(process.execPath, argv, {
      env: { ...process.env, HOME: mkdtempSync(join(tmpdir(), 'grantry-inspector-')) },
      timeout: 90_000,
    });
    return JSON.parse(stdout);
  }

  test('tools/list, then list_invoices completes after the sign-in', async () => {
    const opened = openerRecord();
    const listed = await inspector(opened, '--method', 'tools/list');
    assert.ok(listed.result.tools.some((t) => t.name === 'list_invoices'), JSON.stringify(listed));
    const called = await inspector(opened, '--method', 'tools/call', '--tool-name', 'list_invoices', '--tool-arg', 'status=all');
    assert.notEqual(called.result.isError, true, JSON.stringify(called));
    assert.equal(called.result.structuredContent.invoices.length, 5);
    const [record] = await opened.read(1);
    assert.equal(record.outcome, 'Account connected');
  });
});
