// The official TypeScript SDK client (v2, @modelcontextprotocol/client) against the real
// grantry, in its default legacy mode and in the modern one: the whole sign-in flow, a
// confirmation round, and the account choice's refusals with two accounts connected.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { assertConnected, signIn, startGrantry, walk } from './support.mjs';

const ERAS = {
  legacy: undefined, // the SDK's default: plain `initialize`
  modern: { mode: { pin: '2026-07-28' } },
  auto: { mode: 'auto' },
};

async function connect(grantry, era, onElicit) {
  const options = { capabilities: { elicitation: { form: {}, url: {} } } };
  if (ERAS[era]) options.versionNegotiation = ERAS[era];
  const client = new Client({ name: 'grantry-interop', version: '1' }, options);
  const asked = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params);
    return onElicit(request.params);
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(grantry.mcpUrl)));
  return { client, asked };
}

/** Calls list_invoices; in the legacy era a -32042 is answered by signing in and retrying. */
async function listInvoicesSigningIn(client, era) {
  return callSigningIn(client, era, 'list_invoices', { status: 'all' });
}

/** Calls a tool that needs a sign-in first: in the modern era the client's handler signs in
 * (a URL round); in the legacy era the call fails with -32042, the test signs in, and the
 * same call is made again. */
async function callSigningIn(client, era, name, args) {
  if (era !== 'legacy') return client.callTool({ name, arguments: args });
  const error = await client
    .callTool({ name, arguments: args })
    .then(() => assert.fail('expected -32042'), (e) => e);
  assert.equal(error.code, -32042, String(error));
  const [elicitation] = error.data.elicitations;
  assert.equal(elicitation.mode, 'url');
  assert.ok(elicitation.elicitationId);
  const final = await signIn(elicitation.url);
  assertConnected(final);
  return client.callTool({ name, arguments: args });
}

for (const era of ['legacy', 'modern']) {
  describe(`TypeScript SDK client, ${era} era`, () => {
    let grantry;
    before(async () => {
      grantry = await startGrantry();
    });
    after(() => grantry.stop());

    test('negotiates its era and lists the tools', async () => {
      const opened = await grantry.sessionsOpened();
      const { client } = await connect(grantry, era, () => ({ action: 'cancel' }));
      assert.equal(client.getNegotiatedProtocolVersion(), era === 'legacy' ? '2025-11-25' : '2026-07-28');
      assert.equal(await grantry.sessionsOpened(), opened + (era === 'legacy' ? 1 : 0), 'a session only in the legacy era');
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'list_invoices'));
      await client.close();
    });

    test('signs in and gets the invoices, then write access and a confirmation round void nothing without a yes', async () => {
      const { client, asked } = await connect(grantry, era, async (params) => {
        if (params.mode === 'url') {
          const final = await signIn(params.url);
          assertConnected(final);
          return { action: 'accept' };
        }
        return { action: 'decline' };
      });
      const result = await listInvoicesSigningIn(client, era);
      assert.notEqual(result.isError, true, JSON.stringify(result));
      assert.equal(result.structuredContent.invoices.length, 5);
      const again = await client.callTool({ name: 'list_invoices', arguments: {} });
      assert.notEqual(again.isError, true);

      const open = result.structuredContent.invoices.find((i) => i.status === 'open');
      const before = asked.length;
      // Voiding writes: the connection, made for reading, is asked for write access first
      // (a URL round; in the legacy era -32042), then the person is asked to confirm.
      const voided = await callSigningIn(client, era, 'void_invoice', { invoice_id: open.id });
      const rounds = asked.slice(before).map((params) => params.mode ?? 'form');
      assert.deepEqual(rounds, era === 'legacy' ? ['form'] : ['url', 'form'], 'write access, then asked once to confirm');
      assert.doesNotMatch(JSON.stringify(voided), /"status":"void"/);
      const listed = await client.callTool({ name: 'list_invoices', arguments: { status: 'all' } });
      assert.equal(listed.structuredContent.invoices.find((i) => i.id === open.id).status, 'open');
      await client.close();
    });
  });
}

test('TypeScript SDK client in auto mode picks the modern era', async () => {
  const grantry = await startGrantry();
  try {
    const { client } = await connect(grantry, 'auto', () => ({ action: 'cancel' }));
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.equal(await grantry.sessionsOpened(), 0, 'no initialize: the modern era');
    const { tools } = await client.listTools();
    assert.ok(tools.length > 0);
    await client.close();
  } finally {
    grantry.stop();
  }
});

// Two demo accounts connected, and list_invoices named none: the modern era asks which with a
// form. A declined or cancelled choice must be an error result (isError: true): with the tool's
// output schema listed (tools/list first), the SDK rejects a non-error answer that has no
// structuredContent with a ProtocolError, so callTool must resolve.
describe('TypeScript SDK client, modern era, two accounts and the account choice refused', () => {
  let grantry;
  before(async () => {
    grantry = await startGrantry();
    const { client } = await connect(grantry, 'modern', async (params) => {
      assert.equal(params.mode, 'url', 'only the first sign-in is asked');
      assertConnected(await walk(params.url, { user: 'alice' }));
      return { action: 'accept' };
    });
    assert.notEqual((await client.callTool({ name: 'list_invoices', arguments: {} })).isError, true);
    const card = await client.callTool({ name: 'connect_account', arguments: {} });
    assertConnected(await walk(card._meta['grantry/connect'].url, { user: 'bob' }));
    const listed = await client.callTool({ name: 'list_connections', arguments: {} });
    assert.deepEqual(listed.structuredContent.connections.map((c) => c.account), ['alice', 'bob']);
    await client.close();
  });
  after(() => grantry.stop());

  for (const [action, done] of [['decline', 'declined'], ['cancel', 'cancelled']]) {
    test(`a ${done} choice resolves with isError: true, which the SDK takes`, async () => {
      const { client, asked } = await connect(grantry, 'modern', () => ({ action }));
      const { tools } = await client.listTools();
      assert.ok(tools.find((t) => t.name === 'list_invoices').outputSchema, 'the SDK validates against it');
      const result = await client
        .callTool({ name: 'list_invoices', arguments: {} })
        .catch((error) => assert.fail(`the SDK rejected grantry's answer: ${error}`));
      assert.equal(result.isError, true, JSON.stringify(result));
      assert.equal(result.structuredContent, undefined);
      assert.match(result.content[0].text, /No account was chosen, so nothing was done/);
      assert.deepEqual(
        asked.map((params) => [params.mode ?? 'form', Object.keys(params.requestedSchema.properties)]),
        [['form', ['account']]],
        'asked which account, once',
      );
      await client.close();
    });
  }

  test('a client with URL elicitation and no forms is told the accounts in an error result', async () => {
    const client = new Client(
      { name: 'grantry-interop', version: '1' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: ERAS.modern },
    );
    client.setRequestHandler('elicitation/create', async (request) => assert.fail(`asked: ${JSON.stringify(request.params)}`));
    await client.connect(new StreamableHTTPClientTransport(new URL(grantry.mcpUrl)));
    await client.listTools();
    const result = await client
      .callTool({ name: 'list_invoices', arguments: {} })
      .catch((error) => assert.fail(`the SDK rejected grantry's answer: ${error}`));
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.match(result.content[0].text, /alice \(id alice\), bob \(id bob\)/);
    await client.close();
  });
});
