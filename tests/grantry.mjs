// Starting grantry from the Node test suites (clients, agents, browser): on a free loopback
// port, counted as started only once the process it began says it listens, and started again
// on a new port when another process took that one first.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { traceEnv } from './leaks.mjs';

/** A loopback port free when picked. */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

// What grantry logs once it listens: a start waits for it in what the process it began wrote,
// so another test's server on the same port is never taken for this one.
const LISTENING = 'grantry is listening';
// That line whatever GRANTRY_LOG says (the stages quiet grantry with `warn`): the directive
// enables that event alone, the one with this field.
const LISTENING_DIRECTIVE = 'grantry::program[{max_connections_per_address}]=info';

function announcing(env) {
  const level = env.GRANTRY_LOG || env.RUST_LOG;
  return level ? { ...env, GRANTRY_LOG: `${level},${LISTENING_DIRECTIVE}` } : env;
}

/** Passes what `child` writes on stderr on to `log` (a file descriptor, 'inherit' or
 * 'ignore'); resolves to whether it said it listens before it exited (within 10 s), and what
 * it had written by then. */
function listened(child, log) {
  const pass = typeof log === 'number' ? (chunk) => writeSync(log, chunk)
    : log === 'inherit' ? (chunk) => process.stderr.write(chunk) : () => {};
  let said = '';
  let settled = false;
  return new Promise((resolve) => {
    const settle = (listening) => {
      if (!settled) resolve({ listening, said });
      settled = true;
      clearTimeout(timer);
    };
    const timer = setTimeout(() => settle(false), 10_000);
    child.stderr.on('data', (chunk) => {
      pass(chunk);
      if (settled) return;
      said += chunk;
      if (said.includes(LISTENING)) settle(true);
    });
    child.once('close', () => settle(false));
  });
}

/**
 * Starts `bin` (grantry: dev identity, the demo provider, SQLite in a temp dir named after
 * `prefix`) with `args` after its listen address and data directory and `env` added, its
 * stderr passed to `log`; resolves to `{ base, child }` once it answers.
 */
export async function spawnGrantry(bin, { args = [], env = {}, log = 'ignore', prefix = 'grantry-' } = {}) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const dataDir = mkdtempSync(join(tmpdir(), prefix));
    const child = spawn(bin, ['--listen', `127.0.0.1:${port}`, '--data-dir', dataDir, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: announcing({ ...process.env, ...traceEnv(), ...env }),
    });
    const { listening, said } = await listened(child, log);
    if (!listening) {
      child.kill();
      if (attempt < 5 && said.includes('cannot listen on')) continue;
      throw new Error(`grantry did not start:\n${said}`);
    }
    for (let i = 0; i < 100; i++) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) return { base, child };
      } catch {
        // not answering yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill();
    throw new Error(`grantry did not answer at ${base}/healthz`);
  }
}
