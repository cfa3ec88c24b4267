// tests/browser/dashboard_follow.mjs: the live dashboard of `flood capacity --dashboard`
// in Debian's headless Chromium: each step's run serves the page at the same address in
// turn; a page opened during one step follows to the next (it starts over with the new
// run's rows, every second once), with no request outside the dashboard.
//
//   node tests/browser/dashboard_follow.mjs URL
//
// Prints "ok N - ..." / "not ok N - ..." lines; exits 1 when any check failed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [url] = process.argv.slice(2);
if (!url) {
  console.error('usage: node dashboard_follow.mjs URL');
  process.exit(2);
}
let n = 0;
let failed = 0;
function check(cond, what, detail) {
  n++;
  console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${what}`);
  if (!cond) {
    failed++;
    if (detail !== undefined) console.log(`#   ${JSON.stringify(detail)}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const profile = mkdtempSync(join(tmpdir(), 'flood-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  chromiumSandbox: false,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1200, height: 900 },
  timeout: 60000,
});
console.log('# ready'); // the test starts flood capacity now
try {
  const page = await context.newPage();
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  let loaded = false;
  for (let i = 0; i < 150 && !loaded; i++) { // the first step's run may not listen yet
    try {
      await page.goto(url, { waitUntil: 'load', timeout: 5000 });
      loaded = true;
    } catch (e) {
      await sleep(200);
    }
  }
  check(loaded, 'the page loads during a step');
  const D = () => page.evaluate(() => ({ inst: window.floodDash.inst, steps: window.floodDash.steps,
    rows: window.floodDash.rows, last: window.floodDash.last, gaps: window.floodDash.gaps,
    seconds: Number(document.getElementById('c-seconds').textContent) }));
  await page.waitForFunction(() => window.floodDash.inst !== '', null, { timeout: 20000 });
  const first = await D();
  await page.waitForFunction(() => window.floodDash.steps >= 1 && window.floodDash.rows >= 1,
    null, { timeout: 40000 }).catch(() => {});
  const next = await D();
  check(next.steps >= 1 && next.inst !== first.inst, 'the page finds the next step\'s run', { first, next });
  check(next.rows === next.last + 1 && next.gaps === 0 && next.seconds === next.last + 1,
    'and starts over with its rows: every second once, from 0', next);
  const origin = new URL(url).origin;
  const outside = requests.filter((u) => !u.startsWith(origin));
  check(outside.length === 0, 'no request outside the dashboard', outside);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(`${n - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
