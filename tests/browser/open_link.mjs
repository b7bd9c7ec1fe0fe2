#!/usr/bin/env node
// `grantry bridge --open-with` for the tests: opens the link in headless Chromium and signs
// in as a person would: Continue on grantry's connect page, then Approve (or Deny, when
// GRANTRY_TEST_DECISION=deny) at the demo provider. Appends one JSON line to the file named
// by GRANTRY_TEST_OPENED: the link and the heading of the page it ended on.
import { appendFileSync } from 'node:fs';
import { launchChromium } from './support.mjs';

const [link] = process.argv.slice(2);
const decision = process.env.GRANTRY_TEST_DECISION ?? 'approve';
const browser = await launchChromium();
const record = (outcome) => {
  if (process.env.GRANTRY_TEST_OPENED) {
    appendFileSync(process.env.GRANTRY_TEST_OPENED, `${JSON.stringify({ link, outcome })}\n`);
  }
};
try {
  const page = await (await browser.newContext()).newPage();
  await page.goto(link);
  await Promise.all([page.waitForURL(/\/demo\/authorize/), page.click('button[type=submit]')]);
  await Promise.all([
    page.waitForURL(/\/(connected|oauth\/callback)/),
    page.click(`button[value=${decision}]`),
  ]);
  record((await page.textContent('h1')).trim());
} catch (e) {
  record(`error: ${e.message}`);
} finally {
  await browser.close();
}
