// The official Tasks extension client (@modelcontextprotocol/ext-tasks, with the TypeScript
// SDK client and the 2026-07-28 request framing it asks for) against the real grantry: a
// call needing a sign-in comes back as a task, the person signs in, the task settles with the
// invoices; a void whose confirmation is declined settles with nothing voided; a task handed
// off by one client is resumed by a new one.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from '@modelcontextprotocol/ext-tasks/client';

import { record } from '../leaks.mjs';
import { assertConnected, signIn, startGrantry } from './support.mjs';

const protocolVersion = '2026-07-28';
const clientInfo = { name: 'grantry-tasks-interop', version: '1' };
const clientCapabilities = { elicitation: { form: {}, url: {} } };

/** The host's own dispatcher of raw requests (the ext-tasks client sends `tools/call` and
 * `tasks/*` through it): a second transport, with its own ids. */
function rawDispatcher(url) {
  const transport = new StreamableHTTPClientTransport(url);
  const pending = new Map();
  let next = 0;
  transport.onmessage = (message) => {
    if (!('id' in message) || !('result' in message || 'error' in message)) return;
    // A task's id is the client's handle on it: no log of grantry's may hold one.
    if (typeof message.result?.taskId === 'string') record('taskId', [message.result.taskId]);
    const settle = pending.get(String(message.id));
    pending.delete(String(message.id));
    settle?.(message);
  };
  const started = transport.start();
  const dispatch = async (request, options) => {
    await started;
    const id = `raw-${++next}`;
    const reply = new Promise((resolve) => pending.set(id, resolve));
    await transport.send({ jsonrpc: '2.0', id, ...request }, {
      headers: { ...options?.context?.headers, ...mirrored(request) },
      requestSignal: options?.signal,
    });
    const message = await reply;
    return 'error' in message
      ? { kind: 'error', error: message.error }
      : { kind: 'result', result: message.result };
  };
  return { dispatch, close: () => transport.close() };
}

/** The headers a `tools/call` mirrors its arguments into (SEP-2243: grantry's tools name
 * `provider`), which the SDK's `Client` adds from the tool list and a raw transport does not. */
function mirrored(request) {
  const provider = request.method === 'tools/call' ? request.params?.arguments?.provider : undefined;
  return typeof provider === 'string' ? { 'mcp-param-provider': provider } : {};
}

/** A task session whose person signs in at every link and answers every form `answer`. */
async function taskSession(grantry, answer) {
  const url = new URL(grantry.mcpUrl);
  const client = new Client(clientInfo, {
    capabilities: clientCapabilities,
    versionNegotiation: { mode: { pin: protocolVersion } },
  });
  await client.connect(new StreamableHTTPClientTransport(url));
  const raw = rawDispatcher(url);
  const asked = [];
  const session = createTaskSessionFromClient(client, {
    endpointId: 'grantry',
    rawDispatch: raw.dispatch,
    v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities },
    onInputRequest: createApplicationInputHandler({
      elicitation: async (request, context) => {
        asked.push({ mode: request.params.mode, delivery: context.delivery });
        if (request.params.mode === 'url') {
          assertConnected(await signIn(String(request.params.url)));
          return { action: 'accept' };
        }
        return answer;
      },
      sampling: async () => {
        throw new Error('no sampling here');
      },
      roots: async () => ({ roots: [] }),
    }),
    onError: (e) => console.error('task session:', e),
  });
  const close = async () => {
    await session.close();
    await raw.close();
    await client.close();
  };
  return { client, session, asked, close };
}

/** Calls `name` and settles it: the tool's result. As a task (`require`: it must become one),
 * or answered either way (`allow`: a call needing no round is answered at once). */
async function call(session, name, args, preference = 'require') {
  const execution = await session.callTool(name, args, { task: { preference } });
  if (preference === 'require') assert.equal(execution.kind, 'task', 'grantry answered with a task');
  const seen = [];
  const { outcome } = await execution.settle({
    onEvent: (e) => seen.push(e.type === 'task' ? e.task.status : `outcome:${e.outcome.status}`),
  });
  return { result: resultFromTaskOutcome(outcome), seen };
}

describe('ext-tasks client, 2026-07-28', () => {
  let grantry;
  before(async () => {
    grantry = await startGrantry();
  });
  after(() => grantry.stop());

  test('discovery lists the extension, and a sign-in settles as a task with the invoices', async () => {
    const { client, session, asked, close } = await taskSession(grantry, { action: 'decline' });
    try {
      assert.deepEqual(client.getServerCapabilities().extensions['io.modelcontextprotocol/tasks'], {});
      const { result, seen } = await call(session, 'list_invoices', { status: 'all' });
      assert.notEqual(result.isError, true, JSON.stringify(result));
      assert.equal(result.structuredContent.invoices.length, 5);
      assert.deepEqual(asked, [{ mode: 'url', delivery: 'task-update' }], 'the link, through the task');
      assert.ok(seen.includes('input_required'), seen.join(' '));
    } finally {
      await close();
    }
  });

  test('a void whose confirmation is declined settles with nothing voided', async () => {
    const { session, asked, close } = await taskSession(grantry, { action: 'decline' });
    try {
      const listed = await call(session, 'list_invoices', {}, 'allow');
      const [invoice] = listed.result.structuredContent.invoices;
      // Write access first (a sign-in round), then the confirmation (a form round): one task.
      const voided = await call(session, 'void_invoice', { provider: 'demo', invoice_id: invoice.id });
      assert.equal(voided.result.content[0].text, 'Void cancelled; nothing was changed.');
      assert.deepEqual(
        asked.map((a) => a.mode),
        ['url', 'form'],
        'write access asked by link, the void by form',
      );
      const after = await call(session, 'list_invoices', { status: 'all' }, 'allow');
      const still = after.result.structuredContent.invoices.find((i) => i.id === invoice.id);
      assert.equal(still.status, invoice.status, 'nothing voided');
    } finally {
      await close();
    }
  });

  test('a client restarted with only the stored task reference resumes the task', async () => {
    const fresh = await startGrantry();
    const first = await taskSession(fresh, { action: 'decline' });
    let stored;
    try {
      const execution = await first.session.callTool('list_invoices', { status: 'all' }, { task: { preference: 'require' } });
      assert.equal(execution.kind, 'task');
      // Persisted as a host would (JSON), and released without settling or cancelling it.
      await execution.handoff((reference) => {
        stored = JSON.stringify(reference);
      });
    } finally {
      await first.close();
    }
    assert.deepEqual(first.asked, [], 'the first client showed nothing');
    const second = await taskSession(fresh, { action: 'decline' });
    try {
      const resumed = await second.session.resumeTask(JSON.parse(stored));
      const { outcome } = await resumed.settle();
      const result = resultFromTaskOutcome(outcome);
      assert.notEqual(result.isError, true, JSON.stringify(result));
      assert.equal(result.structuredContent.invoices.length, 5);
      assert.deepEqual(second.asked.map((a) => a.mode), ['url'], 'the resumed client showed the link');
    } finally {
      await second.close();
      fresh.stop();
    }
  });
});
