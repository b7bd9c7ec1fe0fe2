// The leak search's records for the Node stages (clients, browser, bridge), as the end-to-end
// suite keeps them (tests/e2e/support/leaks.rs): with GRANTRY_LEAK_DIR set (scripts/test sets
// it), every secret a test meets is appended to `secrets.txt` there and every grantry log (at
// trace level) is written beside it, for `tests/leak_scan` to search the one for the other.
// Without the variable nothing is written.
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';

const folder = process.env.GRANTRY_LEAK_DIR;
// Query parameters whose values are secrets wherever they travel.
const SECRET_PARAMETERS = new Set(['code', 'state', 'requestState', 'code_verifier', 'access_token', 'refresh_token']);

/** Remembers secret values (`kind` says what they are) for the final search. */
export function record(kind, values) {
  if (!folder) return;
  mkdirSync(folder, { recursive: true });
  // Short values could match by chance; every real secret here is far longer.
  const lines = values.filter((v) => v && v.length >= 12 && !/[\n\t]/.test(v)).map((v) => `${kind}\t${v}\n`);
  if (lines.length) appendFileSync(join(folder, 'secrets.txt'), lines.join(''));
}

/** The secrets a URL carries: a connect link's sealed ticket, codes, states, tokens. */
export function recordUrl(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return;
  }
  const ticket = parsed.pathname.split('/connect/')[1];
  if (ticket) record('connect ticket', [ticket]);
  record('url parameter', [...parsed.searchParams].filter(([k]) => SECRET_PARAMETERS.has(k)).map(([, v]) => v));
}

/** Where a grantry started by `stage` writes its stderr: a file kept for the search, else
 * `fallback` (a stdio setting). */
export function logTo(stage, fallback) {
  if (!folder) return fallback;
  mkdirSync(folder, { recursive: true });
  return openSync(join(folder, `grantry-${stage}-${randomBytes(8).toString('hex')}.log`), 'w');
}

/** The environment a grantry needs for the search: every log line, at trace level. */
export const traceEnv = () => (folder ? { GRANTRY_LOG: 'trace' } : {});
