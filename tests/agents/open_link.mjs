#!/usr/bin/env node
// `grantry bridge --open-with` for the agents' tests: walks the link as a person would
// (tests/clients/support.mjs `walk`: grantry's connect page, the demo's consent) and appends
// the link and the title of the page it ended on to the file named by GRANTRY_TEST_OPENED.
import { appendFileSync } from 'node:fs';
import { walk } from '../clients/support.mjs';

const [link] = process.argv.slice(2);
let outcome;
try {
  const page = await walk(link);
  outcome = /<title>([^<]*)/.exec(page.text)?.[1] ?? `${page.status} ${page.url}`;
} catch (e) {
  outcome = `failed: ${e.message}`;
}
appendFileSync(process.env.GRANTRY_TEST_OPENED, `${JSON.stringify({ link, outcome })}\n`);
