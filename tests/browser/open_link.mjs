#!/usr/bin/env node
// `grantry bridge --open-with` for the tests: opens the link in headless Chromium and goes
// through whatever pages come, as a person would: the OpenID provider's sign-in form (as
// GRANTRY_TEST_LOGIN, default alice), grantry's connect page (Continue), the demo provider's
// consent (Approve, or Deny when GRANTRY_TEST_DECISION=deny); it stops on any other page
// (grantry's "connected" page, the bridge's own loopback page). Appends one JSON line to the
// file named by GRANTRY_TEST_OPENED: the link, the heading of the page it ended on and that
// page's URL. Before anything else, it appends the link to the file named by
// GRANTRY_TEST_LAUNCHED: a test checking that nothing was opened sees a launch at once, not
// after the seconds the browser takes.
import { appendFileSync } from 'node:fs';

const [link] = process.argv.slice(2);
if (process.env.GRANTRY_TEST_LAUNCHED) {
  appendFileSync(process.env.GRANTRY_TEST_LAUNCHED, `${JSON.stringify({ link })}\n`);
}
// Loaded after the launch is written: Playwright takes a while to load.
const { launchChromium } = await import('./support.mjs');
const decision = process.env.GRANTRY_TEST_DECISION ?? 'approve';
const login = process.env.GRANTRY_TEST_LOGIN ?? 'alice';
const record = (outcome, final) => {
  if (process.env.GRANTRY_TEST_OPENED) {
    appendFileSync(process.env.GRANTRY_TEST_OPENED, `${JSON.stringify({ link, outcome, final })}\n`);
  }
};

/** Clicks `selector` and waits until the page has moved on. */
async function submit(page, selector) {
  const before = page.url();
  await Promise.all([page.waitForURL((url) => url.href !== before), page.click(selector)]);
}

const browser = await launchChromium();
try {
  const page = await (await browser.newContext()).newPage();
  await page.goto(link);
  for (let step = 0; step < 10; step++) {
    const url = page.url();
    if (/\/interaction\//.test(url) && (await page.$('input[name=login]'))) {
      await page.fill('input[name=login]', login);
      await submit(page, 'button[type=submit], input[type=submit]');
    } else if (/\/connect\//.test(url)) {
      await submit(page, 'button[type=submit]');
    } else if (/\/demo\/authorize/.test(url)) {
      await submit(page, `button[value=${decision}]`);
    } else {
      break;
    }
  }
  record((await page.textContent('h1')).trim(), page.url());
} catch (e) {
  record(`error: ${e.message}`);
} finally {
  await browser.close();
}
