// tests/browser/dashboard_tqueue.mjs: the live dashboard's chart of the target's own queue
// (--target-queue) in Debian's headless Chromium, on a page of `flood serve --dashboard`
// whose first source fails for a while (tests/integration/dashboard_serve.sh removes the
// file it reads): a line per queue, the failed seconds a gap in the line (the path starts
// over after it), never a point at 0; the depths now in a line above the charts; no
// console error and no request outside the dashboard.
//
//   node tests/browser/dashboard_tqueue.mjs URL FIRST SECOND AFTER
//
// FIRST and SECOND: the two sources' depths before the gap, AFTER the first's after it.
// Prints "ok N - ..." / "not ok N - ..." lines; exits 1 when any check failed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [url, first, second, after] = process.argv.slice(2);
if (!url || after === undefined) {
  console.error('usage: node dashboard_tqueue.mjs URL FIRST SECOND AFTER');
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

const profile = mkdtempSync(join(tmpdir(), 'flood-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  chromiumSandbox: false,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1200, height: 1600 },
  timeout: 60000,
});
console.log('# ready');
try {
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(url, { waitUntil: 'load', timeout: 30000 });
  // the rows: a reading of the first source, then none (null), then one again at AFTER
  await page.waitForFunction((a) => {
    const P = window.floodDash.hist.concat(window.floodDash.win);
    const v = P.map((p) => p.target_queue && p.target_queue.cmd);
    const gap = v.findIndex((x) => x === null);
    return gap > 0 && v.slice(gap).some((x) => x && x.depth === Number(a));
  }, after, { timeout: 40000 });
  await page.waitForTimeout(1200); // the next redraw (every 500 ms when rows came)
  const series = await page.$$eval('#plot-target-queue .series', (els) => els.map((e) => ({
    n: e.getAttribute('data-series'), d: e.getAttribute('d'), dash: e.getAttribute('stroke-dasharray') })));
  const names = series.map((s) => s.n);
  check(names.includes('cmd depth') && names.includes('cmd#2 depth'),
    'the target\'s queue chart has a line per source\'s queue', names);
  const line = series.find((s) => s.n === 'cmd depth') || { d: '' };
  const moves = (line.d.match(/M/g) || []).length;
  check(moves >= 2, 'the seconds without a reading are a gap: the line starts over after them', line.d);
  // the plot's zero is its bottom edge (y = 220 in the 260-high view box: top 10, 210 high)
  const ys = [...line.d.matchAll(/[ML][\d.]+,([\d.]+)/g)].map((m) => Number(m[1]));
  check(ys.length >= 3 && ys.every((y) => y < 219), 'no point of the line at 0 (every reading was at least 1)', ys);
  const other = series.find((s) => s.n === 'cmd#2 depth') || { d: '' };
  check((other.d.match(/M/g) || []).length === 1, 'the source read every second is one unbroken line', other.d);
  const now = await page.textContent('#tq-now');
  check(now.includes(`cmd depth ${after}`) && now.includes(`cmd#2 depth ${second}`),
    'the depths now are written above the charts', now);
  const roles = await page.evaluate(() => window.floodDash.tqRole);
  check(roles['cmd depth'] === 'inbound', 'the roles come from /api/state (inbound: a solid line)', roles);
  const origin = new URL(url).origin;
  const outside = requests.filter((u) => !u.startsWith(origin));
  check(outside.length === 0, 'no request outside the dashboard', outside);
  check(errors.length === 0, 'no console error', errors);
  check(Number(first) > 0, 'the first depth given was above 0 (so a 0 drawn would show)', first);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(`${n - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
