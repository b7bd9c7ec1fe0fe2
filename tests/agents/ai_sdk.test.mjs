// The Vercel AI SDK's MCP client (@ai-sdk/mcp), which answers form elicitations only, through
// `grantry bridge` as its stdio server, in both eras: list_invoices completes after the sign-in
// the bridge opens (tests/agents/open_link.mjs, a person signing in), and void_invoice's
// confirmation reaches it as a form; a yes voids the invoice. The tools are called as the
// SDK hands them to a model (`client.tools()`, `execute`).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { createMCPClient, ElicitationRequestSchema } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';

import { BIN, startGrantry } from '../clients/support.mjs';

const OPENER = fileURLToPath(new URL('open_link.mjs', import.meta.url));
const text = (result) => result.content.map((c) => c.text).join('\n');

/** The opener's records, once there are `n` (10 s at most): the call may complete as the
 * grant lands, before the opener has written down the page it ended on. */
async function records(file, n) {
  let lines = [];
  for (let i = 0; i < 100 && lines.length < n; i++) {
    lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    if (lines.length < n) await new Promise((r) => setTimeout(r, 100));
  }
  return lines.map((l) => JSON.parse(l));
}

/** The SDK's client on `grantry bridge URL` in `era`, declaring form elicitation only. */
async function client(url, era, opened) {
  const scratch = mkdtempSync(join(tmpdir(), 'grantry-ai-sdk-'));
  const transport = new StdioMCPTransport({
    command: BIN,
    args: ['bridge', url, '--open-with', OPENER, '--wait', '30', '--token-cache', scratch],
    // The SDK passes its child only HOME, PATH and a few more: what the opener needs too.
    env: {
      GRANTRY_BIN: BIN,
      GRANTRY_TEST_OPENED: opened,
      ...(process.env.GRANTRY_LEAK_DIR ? { GRANTRY_LEAK_DIR: process.env.GRANTRY_LEAK_DIR } : {}),
    },
    stderr: 'ignore',
  });
  // Over stdio the SDK gives discovery one second, then falls back to the legacy era; the
  // bridge may take longer (it asks the server first), so the era is pinned either way.
  transport.waitsForProtocolVersionDiscovery = era === 'modern';
  return createMCPClient({
    transport,
    capabilities: { elicitation: { form: {} } },
    protocolVersionDiscovery: era === 'modern',
  });
}

for (const [era, version] of [['modern', '2026-07-28'], ['legacy', '2025-11-25']]) {
  test(`@ai-sdk/mcp signs in and confirms through grantry bridge, ${era} era`, { timeout: 120_000 }, async () => {
    const grantry = await startGrantry();
    const opened = join(mkdtempSync(join(tmpdir(), 'grantry-opened-')), 'opened.jsonl');
    writeFileSync(opened, '');
    const mcp = await client(grantry.mcpUrl, era, opened);
    const asked = [];
    mcp.onElicitationRequest(ElicitationRequestSchema, async ({ params }) => {
      asked.push(params);
      return { action: 'accept', content: { confirm: true } };
    });
    try {
      assert.equal(mcp.initializeResult.protocolVersion, version);
      const tools = await mcp.tools();
      const call = { messages: [] };
      const listed = await tools.list_invoices.execute({ status: 'open' }, { ...call, toolCallId: 't1' });
      assert.notEqual(listed.isError, true, JSON.stringify(listed));
      const [sign_in] = await records(opened, 1);
      assert.match(sign_in.outcome, /Account connected/, JSON.stringify(sign_in));
      const [invoice] = JSON.parse(text(listed)).invoices;

      const voided = await tools.void_invoice.execute({ invoice_id: invoice.id }, { ...call, toolCallId: 't2' });
      assert.equal(asked.length, 1, 'one form: the confirmation');
      assert.ok(asked[0].requestedSchema.properties.confirm, JSON.stringify(asked[0]));
      assert.match(text(voided), new RegExp(`Voided invoice ${invoice.number}`));
    } finally {
      await mcp.close();
      grantry.stop();
    }
  });
}
