// What both browser test files need: a free loopback port, Debian's Chromium, and a
// tools/call of list_invoices as an MCP 2026-07-28 client (optionally with a bearer token).
import { createServer } from 'node:net';
import { chromium } from 'playwright-core';

/** Debian's Chromium, headless, with nothing running in the background. */
export const launchChromium = () =>
  chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });

export const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Calls list_invoices { status: 'all' } with `extra` params; returns the JSON-RPC result. */
export async function callListInvoices(base, { token, ...extra } = {}) {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
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
