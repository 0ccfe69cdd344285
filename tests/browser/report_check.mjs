// Opens a driftwatch HTML report in Debian's headless Chromium and prints
// what the page did as one JSON object (the C++ test and bench/report_bench.sh
// judge it): console errors, point counts per chart, the tooltip shown when
// hovering a check-in, whether an injected script ran, load and draw times.
//
//   node report_check.mjs REPORT.html SCREENSHOT.png [HOVER_SHA]
//   REPORT_SHOT=viewport node report_check.mjs …    (the screenshot of the first screen only)
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [htmlPath, shotPath, hoverSha] = process.argv.slice(2);
if (!htmlPath || !shotPath) {
  console.error('usage: node report_check.mjs REPORT.html SCREENSHOT.png [HOVER_SHA]');
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), 'driftwatch-chromium-'));
const out = { console_errors: [], charts: {}, tooltip: '', injected_ran: false };
let context;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] || await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') out.console_errors.push(m.text()); });
  page.on('pageerror', (e) => out.console_errors.push(String(e)));
  const started = Date.now();
  await page.goto(pathToFileURL(resolve(htmlPath)).href, { waitUntil: 'load', timeout: 120000 });
  out.load_ms = Date.now() - started;
  await page.waitForSelector('body[data-drawn="true"]', { timeout: 120000 });
  out.drawn_ms = Date.now() - started;
  // Progressive rendering (the heatmap) finishes after the page says it drew.
  await page.waitForFunction(() => window.driftwatchReport.settled(), null, { timeout: 120000 });
  out.settled_ms = Date.now() - started;
  out.charts = await page.evaluate(() => {
    const r = {};
    const charts = (window.driftwatchReport || {}).charts || {};
    for (const [suite, c] of Object.entries(charts)) {
      const heat = c.modules.getOption();
      r[suite] = {
        uplift_points: c.uplift.getOption().series[0].data.length,
        // Check-ins the uplift line breaks at, and points drawn hollow apart from it.
        uplift_line_gaps: c.uplift.getOption().series[0].data.filter((v) => v && v.value && v.value[1] === null).length,
        hollow_uplift: c.uplift.getOption().series.reduce(
          (n, series) => n + series.data.filter((v) => v && v.value && v.value[1] !== null &&
            /^empty/.test(v.symbol || '')).length, 0),
        default_points: c.totals.getOption().series[0].data.length,
        learned_points: c.totals.getOption().series[1].data.length,
        hollow_totals: c.totals.getOption().series.reduce(
          (n, series) => n + series.data.filter((v) => v && v.symbol === 'emptyCircle').length, 0),
        // Partial points drawn on their line's level, not at their own
        // smaller sums (which would stretch the axis): each at a value its line has.
        partial_totals_off_line: c.totals.getOption().series.filter((series) => series.type === 'scatter').reduce(
          (n, series, k) => {
            const line = c.totals.getOption().series.filter((x) => x.type === 'line')[k];
            const levels = new Set(line.data.map((v) => v && v.value ? v.value[1] : null).filter((v) => v !== null));
            return n + series.data.filter((v) => v && v.value && v.value[1] !== null && !levels.has(v.value[1])).length;
          }, 0),
        // Check-ins the totals lines break at (no value on a line series).
        totals_line_gaps: c.totals.getOption().series.filter((series) => series.type === 'line').reduce(
          (n, series) => n + series.data.filter((v) => v && v.value && v.value[1] === null).length, 0),
        heatmap_columns: heat.xAxis[0].data.length,
        heatmap_rows: heat.yAxis[0].data.length,
        heatmap_cells: heat.series[0].data.length,
        marked_checkins: (c.uplift.getOption().series[0].markLine.data || []).length,
        totals_culprit_lines: ((c.totals.getOption().series[0].markLine || {}).data || []).length,
        // Culprits (filled) and ends of range alerts (hollow) on the line.
        culprit_marks: c.uplift.getOption().series[0].data.filter((v) => v && v.symbol === 'diamond').length,
        range_end_marks: c.uplift.getOption().series[0].data.filter((v) => v && v.symbol === 'emptyDiamond').length,
        // The dashed lines' labels: a culprit's sha, a range end's "..sha".
        mark_labels: (c.uplift.getOption().series[0].markLine.data || []).map((m) => {
          const f = m.label && m.label.formatter;
          return typeof f === 'function' ? f() : f;
        }),
      };
    }
    return r;
  });
  // Hovers the point of `sha` in its suite's chart `chart` (uplift, or
  // totals: its `series`); '' when no tooltip shows.
  async function hover(sha, chart = 'uplift', series = 0) {
    const target = await page.evaluate(([sha, chart, series]) => {
      const rep = window.driftwatchReport;
      for (const [suite, c] of Object.entries(rep.charts)) {
        const s = rep.data.suites.find((x) => x.name === suite);
        const pts = s.points;  // one column per check-in of the series
        const i = pts.findIndex((p) => p.sha === sha);
        if (i < 0) continue;
        // The series asked for, else the first that has a value there (a
        // partial point stands apart from its line).
        const all = c[chart].getOption().series;
        const valueOf = (k) => { const v = all[k].data[i]; return v !== null && typeof v === 'object' ? v.value[1] : v; };
        let k = series;
        if (valueOf(k) === null || valueOf(k) === undefined) k = all.findIndex((_, j) => valueOf(j) !== null && valueOf(j) !== undefined);
        if (k < 0) continue;
        const [x, y] = c[chart].convertToPixel({ seriesIndex: k }, [i, valueOf(k)]);
        const box = c[chart].getDom().getBoundingClientRect();
        return { suite, x: box.left + x, y: box.top + y };
      }
      return null;
    }, [sha, chart, series]);
    if (!target) return '';
    await page.mouse.move(target.x, target.y - 30);
    await page.mouse.move(target.x, target.y, { steps: 5 });
    await page.waitForTimeout(500);
    return page.evaluate(([suite, chart]) => {
      // ECharts puts the tooltip as a div inside the chart's container.
      const dom = window.driftwatchReport.charts[suite][chart].getDom();
      return [...dom.querySelectorAll('div')].map((d) => d.innerText).filter((t) => t).join('\n');
    }, [target.suite, chart]);
  }
  // The lowest point of the first suite sits nearest the chart's edge: its
  // tooltip must show too (out.lowest: its sha and the tooltip).
  const lowest = await page.evaluate(() => {
    const suite = window.driftwatchReport.data.suites[0];
    const pts = suite ? suite.points.filter((p) => p.evaluated) : [];
    return pts.length ? pts.reduce((a, p) => (p.uplift < a.uplift ? p : a)).sha : '';
  });
  if (lowest) out.lowest = { sha: lowest, tooltip: await hover(lowest) };
  // The same for the smallest learned total, at the bottom of the totals chart.
  const smallest = await page.evaluate(() => {
    const suite = window.driftwatchReport.data.suites[0];
    const pts = suite ? suite.points.filter((p) => p.evaluated) : [];
    return pts.length ? pts.reduce((a, p) => (p.total_learned < a.total_learned ? p : a)).sha : '';
  });
  if (smallest) out.smallest_learned = { sha: smallest, tooltip: await hover(smallest, 'totals', 1) };
  // The culprit in the totals chart too: a change of the sizes shows there.
  if (hoverSha) out.totals_tooltip = await hover(hoverSha, 'totals', 0);
  // Last, so the screenshot shows this one's tooltip.
  if (hoverSha) out.tooltip = await hover(hoverSha);
  // With the hover's tooltip showing; REPORT_SHOT=viewport keeps only the first screen (the README's picture).
  await page.screenshot({ path: shotPath, fullPage: process.env.REPORT_SHOT !== 'viewport' });
  // Re-sorting the heatmap: how long until it is drawn again.
  const sort = await page.$('section.suite select');
  if (sort) {
    const t = Date.now();
    await sort.selectOption('most changed');
    await page.waitForFunction(() => window.driftwatchReport.settled(), null, { timeout: 120000 });
    out.resort_ms = Date.now() - t;
  }
  // Printing: each heatmap draws every module (out.print: rows in view and
  // the box's height per suite, on screen, while printing, and after), and a
  // real print to PDF raises the events the page listens to.
  out.print = await page.evaluate(() => {
    const charts = window.driftwatchReport.charts;
    const state = () => Object.fromEntries(Object.entries(charts).map(([suite, c]) => {
      const o = c.modules.getOption();
      const z = (o.dataZoom || [])[0];
      return [suite, { rows: o.yAxis[0].data.length, in_view: z ? z.endValue - z.startValue + 1 : o.yAxis[0].data.length,
        height: c.modules.getDom().clientHeight }];
    }));
    const r = { screen: state() };
    // Scrolled down the rows as a person drags the slider (it keeps
    // percentages): printing puts that window back after (out.print.*.zoom).
    const zoom = () => Object.fromEntries(Object.entries(charts).map(([suite, c]) => {
      const z = (c.modules.getOption().dataZoom || [])[0];
      return [suite, z ? [z.start, z.end, z.startValue, z.endValue] : null];
    }));
    for (const c of Object.values(charts))
      if ((c.modules.getOption().dataZoom || []).length)
        c.modules.dispatchAction({ type: 'dataZoom', dataZoomIndex: 0, start: 20, end: 60 });
    r.scrolled_zoom = zoom();
    window.addEventListener('beforeprint', () => { window.dwPrints = (window.dwPrints || 0) + 1; });
    window.dispatchEvent(new Event('beforeprint'));
    r.printing = state();
    window.dispatchEvent(new Event('afterprint'));
    r.after_zoom = zoom();
    r.after = Object.fromEntries(Object.entries(charts).map(([suite, c]) => [suite, { height: c.modules.getDom().clientHeight }]));
    window.dwPrints = 0;
    return r;
  });
  await page.pdf({ path: join(profile, 'report.pdf') });
  out.print.pdf_beforeprint_events = await page.evaluate(() => window.dwPrints);
  out.print.after_pdf = await page.evaluate(() => Object.fromEntries(Object.entries(window.driftwatchReport.charts)
    .map(([suite, c]) => [suite, c.modules.getDom().clientHeight])));
  // At a phone's width the page itself must not scroll sideways: wide
  // tables scroll inside themselves (out.phone: the page's and the window's widths).
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  out.phone = await page.evaluate(() => ({
    page_width: document.documentElement.scrollWidth,
    window_width: document.documentElement.clientWidth,
  }));
  out.injected_ran = await page.evaluate(() => window.pwned !== undefined);
  out.script_elements = await page.evaluate(() => document.scripts.length);
} catch (e) {
  out.error = String(e && e.stack || e);
} finally {
  if (context) await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
