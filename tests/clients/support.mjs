// Shared by the client interop tests: a grantry per test on a free loopback port, and a
// person's sign-in through the demo provider (connect page, Continue, Approve), with cookies.
import assert from 'node:assert/strict';
import { spawnGrantry } from '../grantry.mjs';
import { logTo, record, recordUrl } from '../leaks.mjs';

export const BIN = process.env.GRANTRY_BIN;
if (!BIN) throw new Error('GRANTRY_BIN names the grantry binary');

/** Starts grantry (dev identity, demo provider, SQLite) with `args` and `env` added;
 * `stop()` ends it. */
export async function startGrantry(args = [], env = {}) {
  const log = logTo('clients', 'inherit');
  const { base, child } = await spawnGrantry(BIN, { args, env, log, prefix: 'grantry-clients-' });
  return { base, mcpUrl: `${base}/mcp`, stop: () => child.kill(), sessionsOpened: () => sessionsOpened(base) };
}

/** grantry's count of legacy-era sessions opened (`initialize`), from /metrics. */
async function sessionsOpened(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('grantry_mcp_sessions_opened_total '));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** A browser: follows redirects by hand so that it can keep cookies. */
export class Browser {
  cookies = new Map();

  async request(url, init = {}) {
    for (let hops = 0; hops < 10; hops++) {
      const headers = { ...(init.headers ?? {}) };
      const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      if (cookie) headers.cookie = cookie;
      recordUrl(url);
      const response = await fetch(url, { ...init, headers, redirect: 'manual' });
      for (const set of response.headers.getSetCookie()) {
        const [pair] = set.split(';');
        const at = pair.indexOf('=');
        this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
        record('cookie', [pair.slice(at + 1).trim()]);
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        url = new URL(location, url).href;
        init = {};
        continue;
      }
      return { url, status: response.status, text: await response.text() };
    }
    throw new Error('too many redirects');
  }

  /** Submits the page's first form, with `overrides`. */
  async submit(page, overrides = {}) {
    const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/.exec(page.text);
    if (!form) throw new Error(`no form on ${page.url}: ${page.text.slice(0, 300)}`);
    const fields = new URLSearchParams();
    for (const input of form[2].matchAll(/<input[^>]*>/g)) {
      const name = /name="([^"]*)"/.exec(input[0]);
      const value = /value="([^"]*)"/.exec(input[0]);
      if (name) fields.set(name[1], unescape(value ? value[1] : ''));
    }
    for (const [k, v] of Object.entries(overrides)) fields.set(k, v);
    return this.request(new URL(unescape(form[1]), page.url).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: fields.toString(),
    });
  }
}

function unescape(html) {
  return html.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#x2F;', '/').replaceAll('&#47;', '/');
}

/** The sign-in ended on grantry's "Account connected" page, and on nothing else (a refusal
 * page such as "Account not connected" also says "connected"). */
export function assertConnected(final) {
  assert.equal(final.status, 200, final.text);
  assert.match(final.url, /\/connected\?provider=/, `ended on ${final.url}`);
  assert.match(final.text, /<title>Account connected/);
  assert.match(final.text, /account is connected\. Return to your assistant/);
}

/**
 * Walks from `url` through whatever pages come, as a person would: an OpenID provider's
 * sign-in form (as `login`), grantry's connect page (Continue), the demo provider's consent
 * (Approve, as the demo user `user` when given); stops on any other page, and returns it.
 */
export async function walk(url, { login = 'alice', user, browser = new Browser() } = {}) {
  let page = await browser.request(url);
  for (let step = 0; step < 8; step++) {
    if (/name="login"/.test(page.text)) page = await browser.submit(page, { login });
    else if (/\/connect\//.test(page.url) && /<form/.test(page.text)) page = await browser.submit(page);
    else if (/\/demo\/authorize/.test(page.url)) {
      page = await browser.submit(page, { decision: 'approve', ...(user ? { user } : {}) });
    } else break;
  }
  return page;
}

/** Opens a connect link like a person and approves at the demo provider; the last page. */
export async function signIn(link) {
  const browser = new Browser();
  const connect = await browser.request(link);
  if (connect.status !== 200) throw new Error(`connect page ${connect.status}: ${connect.text}`);
  const consent = await browser.submit(connect);
  if (!consent.text.includes('Authorize')) throw new Error(`no consent page: ${consent.text.slice(0, 300)}`);
  return browser.submit(consent, { decision: 'approve' });
}
