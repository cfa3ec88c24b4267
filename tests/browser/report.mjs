// tests/browser/report.mjs: open a flood report.html in Debian's headless Chromium and check
// what a reader would see: every chart drawn with data for every series that has data in
// run.json (the figures recomputed here from run.json, not taken from flood), no console
// errors, no network request of any kind, and a screenshot.
//
//   node tests/browser/report.mjs RUN_DIR SCREENSHOT.png
//
// Prints "ok N - ..." / "not ok N - ..." lines; exits 1 when any check failed.
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const [runDir, shot] = process.argv.slice(2);
if (!runDir || !shot) {
  console.error('usage: node report.mjs RUN_DIR SCREENSHOT.png');
  process.exit(2);
}

let n = 0;
let failed = 0;
function check(cond, what, detail) {
  n++;
  if (cond) {
    console.log(`ok ${n} - ${what}`);
  } else {
    failed++;
    console.log(`not ok ${n} - ${what}`);
    if (detail !== undefined) console.log(`#   ${JSON.stringify(detail)}`);
  }
}

const run = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
const series = run.series;
const sum = (f) => series.reduce((a, e) => a + f(e), 0);
const out = (e, k) => (e.outcomes && typeof e.outcomes[k] === 'number' ? e.outcomes[k] : 0);
const ok2xx = (e) => out(e, '200') + out(e, '202') + out(e, '2xx_other');
const allOut = (e) => Object.values(e.outcomes || {}).reduce((a, v) => a + v, 0);
const near = (a, b) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));

// What each chart must show, from run.json alone: [series name, expected sum or null].
const expected = {
  'plot-rate': [
    ['offered', sum((e) => e.offered)],
    ['sent', sum((e) => e.sent)],
    ['completed (achieved)', sum((e) => e.completed)],
    ['2xx', sum(ok2xx)],
  ],
  'plot-outcomes': [
    ['2xx', sum(ok2xx)],
    ['401/403', sum((e) => out(e, '401') + out(e, '403'))],
    ['429', sum((e) => out(e, '429'))],
    ['503', sum((e) => out(e, '503'))],
    ['other errors', sum((e) => allOut(e) - ok2xx(e) - out(e, '401') - out(e, '403') - out(e, '429') - out(e, '503'))],
    ['shed', sum((e) => e.shed || 0)],
  ],
  'plot-latency': [
    ['p50', sum((e) => e.p50_ms || 0)],
    ['p99', sum((e) => e.p99_ms || 0)],
  ],
  'plot-distribution': [
    ['corrected latency', null],
    ['service time', null],
    ['dispatch lag', null],
  ],
  'plot-inflight': [['in flight', sum((e) => e.in_flight || 0)]],
};
const has = (k) => series.some((e) => k in e);
for (const [name, key] of [['max', 'max_ms'], ['service p50', 'service_p50_ms'], ['service p99', 'service_p99_ms']]) {
  if (has(key)) expected['plot-latency'].push([name, sum((e) => e[key] || 0)]);
}
if (has('lag_p99_ms')) {
  expected['plot-latency'].push(['dispatch lag p99', sum((e) => e.lag_p99_ms || 0)]);
}
// Follows answered per second, and Follow-to-Accept per second for the seconds with Accepts
if (has('accepts')) {
  expected['plot-accepts'] = [
    ['Accepts', sum((e) => e.accepts || 0)],
    ['Rejects', sum((e) => e.rejects || 0)],
  ];
  if (sum((e) => e.accepts || 0) > 0) {
    const f2a = (k) => sum((e) => (e.accepts > 0 ? e[k] || 0 : 0));
    expected['plot-f2a'] = [
      ['Follow-to-Accept p50', f2a('f2a_p50_ms')],
      ['Follow-to-Accept p99', f2a('f2a_p99_ms')],
    ];
  }
}
const fa = (run.probes && run.probes.follow_to_accept_ms) || {};
if (fa.count > 0) expected['plot-distribution'].push(['Follow-to-Accept', null]);

const profile = mkdtempSync(join(tmpdir(), 'flood-chromium-'));
// A new empty profile for this run (Playwright wants it as launchPersistentContext's folder)
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  chromiumSandbox: false,
  args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
  viewport: { width: 1200, height: 900 },
  timeout: 60000,
});
const page = await context.newPage();
const consoleErrors = [];
const requests = [];
page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(m.text()); });
page.on('pageerror', (e) => consoleErrors.push(String(e)));
page.on('request', (r) => requests.push(r.url()));

const url = pathToFileURL(resolve(join(runDir, 'report.html'))).href;
const resp = await page.goto(url, { waitUntil: 'load', timeout: 30000 });
check(resp === null || resp.ok(), 'report.html loads from file://');
check((await page.title()).startsWith('flood report'), 'the page has its title', await page.title());

const charts = await page.evaluate(() => {
  const res = {};
  for (const svg of document.querySelectorAll('svg.plot')) {
    const s = {};
    for (const g of svg.querySelectorAll('g.series')) {
      const shapes = [...g.querySelectorAll('path, circle')];
      let w = 0, h = 0, area = 0;
      for (const el of shapes) {
        const b = el.getBBox();
        w = Math.max(w, b.width);
        h = Math.max(h, b.height);
        // the drawn area, sampled along the outline (shoelace formula)
        if (el.tagName === 'path' && el.getAttribute('d').trim().endsWith('Z')) {
          const len = el.getTotalLength();
          const pts = [];
          for (let i = 0; i <= 2000; i++) pts.push(el.getPointAtLength((len * i) / 2000));
          let a = 0;
          for (let i = 0; i < pts.length; i++) {
            const p = pts[i], q = pts[(i + 1) % pts.length];
            a += p.x * q.y - q.x * p.y;
          }
          area += Math.abs(a / 2);
        }
      }
      s[g.dataset.series] = {
        points: Number(g.dataset.points), sum: Number(g.dataset.sum),
        shapes: shapes.length, w, h, area,
        d: shapes.map((e) => e.getAttribute('d') || '').join(' ').length,
      };
    }
    const r = svg.getBoundingClientRect();
    res[svg.id] = { series: s, width: r.width, height: r.height };
  }
  return res;
});

for (const [id, want] of Object.entries(expected)) {
  const c = charts[id];
  check(c && c.width > 300 && c.height > 80, `chart ${id} is on the page and visible`, c && [c.width, c.height]);
  if (!c) continue;
  for (const [name, total] of want) {
    const s = c.series[name];
    check(s !== undefined, `${id}: series '${name}' is drawn`, Object.keys(c.series));
    if (!s) continue;
    const hasData = total === null ? true : total > 0;
    if (id === 'plot-outcomes') {
      // every layer spans the run; a layer with answers has height
      check(s.points === series.length && s.shapes === 1, `${id}: '${name}' spans all ${series.length} seconds`, s);
      check(hasData ? s.area > 10 : s.area < 10, `${id}: '${name}' covers ${hasData ? 'an area' : 'no area'} (sum ${total})`, s);
    } else {
      check(s.points > 0 && s.shapes > 0 && s.d > 0, `${id}: '${name}' has data points (${s.points})`, s);
    }
    if (total !== null) check(near(s.sum, total), `${id}: '${name}' adds up to run.json's ${total}`, s.sum);
  }
}

// The text a reader checks against the terminal: the conservation line, as recorded.
const cons = await page.textContent('#conservation');
check(cons === run.conservation.line, 'the conservation line is run.json\'s', [cons, run.conservation.line]);
const cls = await page.getAttribute('#conservation', 'class');
check(cls === (run.conservation.ok ? 'ok' : 'bad'), `the conservation line is marked ${run.conservation.ok ? 'ok' : 'bad'}`, cls);
const faults = (run.inbound && run.inbound.faults) || [];
const faultText = await page.textContent('#faults + *');
check(faults.every((f) => faultText.includes(f)) && (faults.length > 0 || faultText.includes('None')),
  `the faults in force are listed (${faults.length})`, faultText);
const cfgText = await page.textContent('table.config');
check(cfgText.includes(String(run.config.seed)) && (!run.config.inbox || cfgText.includes(run.config.inbox)),
  'the configuration table shows the seed and the inbox');

const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
check(overflow <= 0, 'the page does not scroll sideways', overflow);
if (!run.config.inbox && Array.isArray(run.config.personas)) {
  const shown = await page.$$eval('ul.targets li', (l) => l.map((e) => e.textContent));
  check(shown.length === run.config.personas.length && shown.every((t, i) => t === run.config.personas[i]),
    `every persona is listed (${run.config.personas.length})`, shown.length);
}

await page.screenshot({ path: shot, fullPage: true });
check(consoleErrors.length === 0, 'no console errors or warnings', consoleErrors);
const network = requests.filter((u) => u !== url);
check(network.length === 0, 'no request besides the page itself', network);
const scripts = await page.evaluate(() => document.querySelectorAll('script, iframe, img, link[rel=stylesheet]').length);
check(scripts === 0, 'no script, frame, image or external stylesheet in the page', scripts);

await context.close();
rmSync(profile, { recursive: true, force: true });
console.log(`# screenshot: ${shot}`);
process.exit(failed ? 1 : 0);
