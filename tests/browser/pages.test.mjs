// Every page a person meets, in each language grantry speaks, light and dark, checked by
// axe-core (pinned) in headless Chromium: the start page (/), the connect page, the demo
// provider's consent, the "connected" page, /connections, the disconnect confirmation, and an
// error page. Each must have no axe violation, carry the reader's language, and fit a 360 px
// screen without scrolling sideways. Screenshots of each page at 360 and 1280 px go to
// $GRANTRY_SCREENSHOTS/pages (CI keeps the folder).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  callListInvoices, checkPage, launchChromium, startGrantry, stopAll, submitAndLoad,
} from './support.mjs';

const shots = join(process.env.GRANTRY_SCREENSHOTS ?? join(tmpdir(), 'grantry-screenshots'), 'pages');
let browser;

before(async () => {
  browser = await launchChromium();
  mkdirSync(shots, { recursive: true });
});

after(async () => {
  await browser?.close();
  stopAll();
});

/**
 * Checks the page at both widths (see checkPage) and the reader's language on grantry's own
 * pages; writes its screenshots as `name`.
 */
async function check(page, name, lang) {
  await checkPage(page, shots, name);
  if (lang) assert.equal(await page.getAttribute('html', 'lang'), lang, name);
}

/** Walks every page once for a reader of `lang` in `scheme`; `label` names the screenshots. */
async function walk(base, lang, scheme, label) {
  const context = await browser.newContext({
    bypassCSP: true, // to inject axe-core; the pages' own policy is tested elsewhere
    colorScheme: scheme,
    locale: lang,
    extraHTTPHeaders: { 'accept-language': lang },
  });
  const page = await context.newPage();
  const at = (name) => `${label}-${name}`;
  const first = await callListInvoices(base);
  const [, request] = Object.entries(first.inputRequests)[0];

  await page.goto(`${base}/`);
  await check(page, at('home'), lang);
  await page.goto(request.params.url);
  await check(page, at('connect'), lang);
  await Promise.all([page.waitForURL(/\/demo\/authorize/), page.click('button[type=submit]')]);
  await check(page, at('demo-consent'), null); // the provider's page, in its own language
  await Promise.all([page.waitForURL(/\/connected/), page.click('button[value=approve]')]);
  await check(page, at('connected'), lang);

  await page.goto(`${base}/connections`);
  await check(page, at('connections'), lang);
  await Promise.all([page.waitForURL(/\/disconnect$/), page.click('a[href$="/disconnect"]')]);
  await check(page, at('confirm-disconnect'), lang);
  // The result page itself, not the confirmation still on screen.
  await submitAndLoad(page, 'button[type=submit]', /\/disconnect$/);
  assert.match(await page.textContent('main'), disconnected[lang], `${label}: ${page.url()}`);
  await check(page, at('disconnected'), lang);

  await page.goto(`${base}/connect/not-a-ticket`);
  await check(page, at('error'), lang);
  await context.close();
}

const headings = { en: 'Your connections', de: 'Ihre Verbindungen', fr: 'Vos connexions' };
// What the page says once a disconnect is done (the demo provider revokes).
const disconnected = {
  en: /Disconnected Demo Billing\. Demo Billing confirmed/,
  de: /Demo Billing getrennt\. Demo Billing hat bestätigt/,
  fr: /Demo Billing déconnecté\. Demo Billing a confirmé/,
};

test('every page passes axe-core in English, German and French, light and dark', async () => {
  const base = await startGrantry();
  for (const lang of Object.keys(headings)) {
    for (const scheme of ['light', 'dark']) {
      await walk(base, lang, scheme, `${lang}-${scheme}`);
    }
    // The page really is in that language.
    const body = await (await fetch(`${base}/connections`, { headers: { 'accept-language': lang } })).text();
    assert.match(body, new RegExp(headings[lang]));
  }
});

test('a branded deployment passes axe-core too, light and dark', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'grantry-brand-'));
  const logo = join(dir, 'logo.svg');
  writeFileSync(
    logo,
    '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32"><rect width="32" height="32" rx="6" fill="#7a1f5c"/></svg>\n',
  );
  const base = await startGrantry([
    '--brand-name', 'Acme Books', '--brand-logo', logo, '--brand-color', '#7a1f5c',
    '--support-url', 'https://help.acme.example/',
  ]);
  for (const scheme of ['light', 'dark']) {
    await walk(base, 'en', scheme, `brand-${scheme}`);
  }
});
