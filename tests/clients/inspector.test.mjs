// MCP Inspector's CLI (@modelcontextprotocol/inspector) against the real grantry, in both
// protocol eras: it lists the tools, sees the connect card's app metadata, and calls
// list_invoices. The CLI declares no URL elicitation, so by default the call returns the
// connect link as text, the person opens it, and the next call returns the invoices; with
// --no-url-elicitation=spec the answer is -32021.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { assertConnected, signIn, startGrantry } from './support.mjs';

// The installed tree is the folder above the tests' copy (tests/clients/run).
const here = fileURLToPath(new URL('..', import.meta.url));
const cli = join(here, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
// The Inspector keeps a catalog and secrets under $HOME: give it a scratch one.
const home = mkdtempSync(join(tmpdir(), 'grantry-inspector-'));

/** Runs the Inspector CLI; its JSON output (a result or an error envelope) and exit code. */
async function inspector(url, era, ...args) {
  const argv = [cli, '--cli', url, '--protocol-era', era, '--format', 'json', '-q', ...args];
  try {
    const { stdout } = await promisify(execFile)(process.execPath, argv, {
      env: { ...process.env, HOME: home },
      timeout: 60_000,
    });
    return { code: 0, out: JSON.parse(stdout) };
  } catch (e) {
    if (e.code === undefined || typeof e.code !== 'number') throw e;
    return { code: e.code, out: JSON.parse(e.stdout || e.stderr) };
  }
}

/** The CLI's probe of tools' app metadata (declaring the UI extension): one object a tool. */
async function appInfo(url, era, ...args) {
  const argv = [cli, '--cli', url, '--protocol-era', era, '--format', 'json', '-q', '--app-info', '--advertise-apps', ...args];
  const { stdout } = await promisify(execFile)(process.execPath, argv, {
    env: { ...process.env, HOME: home },
    timeout: 60_000,
  });
  return stdout.trim().split('\n').map((line) => JSON.parse(line));
}

for (const era of ['legacy', 'modern']) {
  describe(`MCP Inspector CLI, ${era} era`, () => {
    let spec;
    let link;
    before(async () => {
      spec = await startGrantry(['--no-url-elicitation', 'spec']);
      link = await startGrantry();
    });
    after(() => {
      spec.stop();
      link.stop();
    });

    test('lists the tools, in that era', async () => {
      const opened = await spec.sessionsOpened();
      const { code, out } = await inspector(spec.mcpUrl, era, '--method', 'tools/list');
      assert.equal(code, 0, JSON.stringify(out));
      assert.equal(await spec.sessionsOpened(), opened + (era === 'legacy' ? 1 : 0), 'a session only in the legacy era');
      const names = out.result.tools.map((t) => t.name);
      assert.ok(names.includes('list_invoices'), names.join(','));
    });

    test('sees the connect card: its resource, MIME type and CSP', async () => {
      const lines = await appInfo(link.mcpUrl, era, '--method', 'tools/list');
      const apps = lines.filter((tool) => tool.hasApp);
      assert.deepEqual(apps.map((tool) => tool.toolName), ['connect_account'], JSON.stringify(lines));
      const [card] = apps;
      assert.equal(card.resourceUri, 'ui://grantry/connect-card.html');
      assert.equal(card.resourceMimeType, 'text/html;profile=mcp-app');
      assert.deepEqual(card.csp, { baseUriDomains: [], connectDomains: [], frameDomains: [], resourceDomains: [] });
      assert.deepEqual(card.visibility, ['model', 'app']);
    });

    test('with --no-url-elicitation=spec, list_invoices gets the -32021 answer', async () => {
      const { out } = await inspector(spec.mcpUrl, era, '--method', 'tools/call', '--tool-name', 'list_invoices');
      assert.match(JSON.stringify(out.error), /URL-mode elicitation/);
    });

    test('by default: the link, a sign-in, then the invoices', async () => {
      const first = await inspector(link.mcpUrl, era, '--method', 'tools/call', '--tool-name', 'list_invoices');
      const text = first.out.result?.content?.[0]?.text ?? '';
      assert.equal(first.out.result?.isError, true, JSON.stringify(first.out));
      const url = text.match(/https?:\/\/\S+\/connect\/\S+/)?.[0];
      assert.ok(url, text);
      const final = await signIn(url);
      assertConnected(final);
      const second = await inspector(
        link.mcpUrl, era, '--method', 'tools/call', '--tool-name', 'list_invoices', '--tool-arg', 'status=all',
      );
      assert.equal(second.code, 0, JSON.stringify(second.out));
      assert.notEqual(second.out.result.isError, true, JSON.stringify(second.out));
      assert.equal(second.out.result.structuredContent.invoices.length, 5);
    });
  });
}
