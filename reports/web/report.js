// Draws the drift report's charts from the inlined data (driftwatch's
// render_html puts it in <script id="driftwatch-data">). Per suite: the uplift
// over history with culprits marked, the default's and the learned total
// .text beside it, and a per-module heatmap with sort and filter controls.
// All text from the data reaches the page through textContent or ECharts'
// encodeHTML, never as markup.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('driftwatch-data').textContent);
  var enc = echarts.format.encodeHTML;
  var charts = {};
  var rendering = [];  // charts whose (progressive) rendering has not finished yet
  window.driftwatchReport = {
    data: data, charts: charts,
    settled: function () { return rendering.every(function (c) { return c.dwFinished; }); }
  };
  function init(box) {
    var chart = echarts.init(box);
    chart.dwFinished = false;
    chart.on('finished', function () { chart.dwFinished = true; });
    rendering.push(chart);
    return chart;
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // Two decimals, signed; a tiny negative is "+0.00%", not a "-0.00%" loss.
  function pct(x) {
    if (typeof x !== 'number') return '';
    var s = (100 * x).toFixed(2);
    return (s.charAt(0) === '-' && +s !== 0 ? '' : '+') + (+s === 0 ? '0.00' : s) + '%';
  }
  function short(sha) { return sha ? sha.slice(0, 12) : ''; }
  // A toolchain stands for a check-in under a made-up sha: named by its label.
  function toolchain(sha) {
    return (data.toolchain_labels || {})[sha];
  }
  function name(sha) {
    return toolchain(sha) !== undefined ? 'toolchain ' + toolchain(sha) : short(sha);
  }
  function label(p) {
    return toolchain(p.sha) !== undefined ? toolchain(p.sha) : p.date + ' ' + p.sha.slice(0, 7);
  }
  function commitHtml(p) {
    return '<b>' + enc(name(p.sha)) + '</b> ' + enc(p.date) + '<br>' + enc(p.author) + '<br>' +
        '<span class="subject">' + enc(p.subject) + '</span>';
  }
  // A check-in with no sizes: its build failed, or the policy could not run there.
  function unmeasured(p) {
    return p.build_outcome !== 'ok' ? 'build ' + enc(p.build_outcome)
      : 'the policy cannot run: ' + enc(p.evaluation_error || 'not evaluated');
  }

  // An alert that still says something of the history: not one a person
  // ignored, nor a wide one a later sweep replaced by the check-ins it pinned.
  function marked(a) {
    return a.state !== 'ignored' && !(a.state === 'resolved' && /^superseded/.test(a.note || ''));
  }

  // Culprits, or the first bad check-in of a range no bisection narrowed, of
  // each suite's alerts, by sha.
  function marks(suite) {
    var out = {};
    data.alerts.forEach(function (a) {
      if (a.suite !== suite || !marked(a)) return;
      var sha = a.culprit.sha || a.first_bad;
      if (!sha) return;
      (out[sha] = out[sha] || []).push(a);
    });
    return out;
  }

  // A point that measured fewer of the suite's modules than others (a
  // timeout, a crash there): its totals dip by what it left out.
  function partial(s, p) { return p.evaluated && p.measured < s.modules.length; }
  function partialNote(s, p) {
    if (!partial(s, p)) return '';
    return '<br><b class="culprit">over ' + p.measured + ' of ' + s.modules.length + ' modules</b>: ' +
      (s.modules.length - p.measured) + ' not measured here, so its totals are not comparable with its neighbours';
  }

  // A dashed line at each culprit (or a range's last check-in), in both
  // charts: a change of the sizes shows in the totals, not in the uplift.
  function culpritLines(pts, culprits) {
    return Object.keys(culprits).map(function (sha) {
      var i = pts.findIndex(function (p) { return p.sha === sha; });
      var pinned = culprits[sha].some(function (a) { return a.culprit.sha === sha; });
      return i < 0 ? null : {
        xAxis: i,
        label: {
          // "..abc1234": the end of a range, not its culprit.
          formatter: (pinned ? '' : '..') + (toolchain(sha) !== undefined ? toolchain(sha) : sha.slice(0, 7)),
          position: 'insideEndTop',
          fontSize: 9
        }
      };
    }).filter(Boolean);
  }
  function culpritHtml(culprits, p) {
    var html = '';
    (culprits[p.sha] || []).forEach(function (a) {
      html += '<br><b class="culprit">' + (a.culprit.sha ? 'culprit' : 'first bad of a range') + '</b>: ' + enc(a.sentence);
    });
    return html;
  }

  function upliftChart(box, s, pts, culprits) {
    var chart = init(box);
    // A partial point's uplift is over other modules than its neighbours':
    // the line breaks there and the point stands apart (hollow; orange, or
    // a red diamond where it is a culprit), as in the totals chart.
    function uplift(p) { return +(100 * p.uplift).toFixed(4); }
    // A culprit is a filled diamond; the last check-in of a range alert
    // (no one check-in made it, or none was pinned) a hollow one.
    function pinned(sha) {
      return (culprits[sha] || []).some(function (a) { return a.culprit.sha === sha; });
    }
    var values = pts.map(function (p, i) {
      var item = { value: [i, p.evaluated && !partial(s, p) ? uplift(p) : null] };
      if (culprits[p.sha])
        item.itemStyle = { color: '#d62728' }, item.symbol = pinned(p.sha) ? 'diamond' : 'emptyDiamond',
          item.symbolSize = 14;
      return item;
    });
    var partialValues = pts.map(function (p, i) {
      if (!partial(s, p)) return { value: [i, null] };
      if (culprits[p.sha])
        return { value: [i, uplift(p)], itemStyle: { color: '#d62728' }, symbol: 'emptyDiamond', symbolSize: 14 };
      return { value: [i, uplift(p)], itemStyle: { color: '#ff7f0e' }, symbol: 'emptyCircle', symbolSize: 10 };
    });
    var lines = culpritLines(pts, culprits);
    chart.setOption({
      animation: false,
      title: { text: 'uplift on ' + s.name, textStyle: { fontSize: 14 } },
      grid: { left: 60, right: 20, top: 40, bottom: 60 },
      tooltip: {
        trigger: 'axis', confine: true, extraCssText: 'max-width: 480px; white-space: normal;',
        formatter: function (ps) {
          var p = pts[ps[0].dataIndex];
          if (!p.evaluated) return commitHtml(p) + '<br><b class="culprit">' + unmeasured(p) + '</b>';
          var html = commitHtml(p) + '<br>uplift <b>' + pct(p.uplift) + '</b>, w/t/l ' + p.wins + '/' + p.ties + '/' + p.losses;
          // Compiles the policy broke are losses with no size: said apart, not hidden.
          if (p.learned_failed) html += ', <b class="culprit">' + p.learned_failed + ' broken by the policy</b>';
          return html + partialNote(s, p) + culpritHtml(culprits, p);
        }
      },
      xAxis: { type: 'category', data: pts.map(label), axisLabel: { rotate: 30, fontSize: 10 } },
      // Room below and above the extremes: a point on the grid's edge (an
      // uplift of exactly zero, often) is hard to hover and half hidden.
      yAxis: { type: 'value', name: 'uplift %', scale: true, boundaryGap: ['10%', '10%'] },
      dataZoom: pts.length > 60 ? [{ type: 'inside' }, { type: 'slider', height: 16, bottom: 4 }] : [],
      series: [{
        name: 'uplift', type: 'line', step: 'end', data: values, symbolSize: 7, showAllSymbol: true,
        markLine: { symbol: 'none', silent: true, lineStyle: { color: '#d62728', type: 'dashed' }, data: lines }
      }, { name: 'uplift', type: 'scatter', data: partialValues }]
    });
    return chart;
  }

  function totalsChart(box, s, pts, culprits) {
    var chart = init(box);
    // A partial point's totals dip by the modules it left out, which is no
    // change of the code: the lines break there, and the point stands apart,
    // hollow and orange as in the uplift chart.
    function totals(of) {
      return pts.map(function (p, i) { return { value: [i, p.evaluated && !partial(s, p) ? of(p) : null] }; });
    }
    // Drawn at its line's level (the last whole point's, else the next's):
    // its own sums, over fewer modules, would stretch the axis until the
    // lines' real moves looked flat. Its tooltip gives its own sums.
    function partials(of) {
      function whole(j) { return pts[j].evaluated && !partial(s, pts[j]); }
      return pts.map(function (p, i) {
        if (!partial(s, p)) return { value: [i, null] };
        var at = -1;
        for (var j = i - 1; j >= 0 && at < 0; --j) if (whole(j)) at = j;
        for (var k = i + 1; k < pts.length && at < 0; ++k) if (whole(k)) at = k;
        return { value: [i, of(at < 0 ? p : pts[at])], itemStyle: { color: '#ff7f0e' }, symbol: 'emptyCircle',
                 symbolSize: 10 };
      });
    }
    function defaults(p) { return p.total_default; }
    function learned(p) { return p.total_learned; }
    chart.setOption({
      animation: false,
      title: { text: 'total .text on ' + s.name, textStyle: { fontSize: 14 } },
      legend: { right: 10, top: 0, data: ['default', 'learned'] },
      grid: { left: 70, right: 20, top: 50, bottom: 60 },
      tooltip: {
        trigger: 'axis', confine: true, extraCssText: 'max-width: 480px; white-space: normal;',
        formatter: function (ps) {
          var p = pts[ps[0].dataIndex];
          if (!p.evaluated) return commitHtml(p) + '<br>' + unmeasured(p);
          return commitHtml(p) + '<br>default ' + p.total_default + ' B<br>learned ' + p.total_learned + ' B' +
            partialNote(s, p) + culpritHtml(culprits, p);
        }
      },
      xAxis: { type: 'category', data: pts.map(label), axisLabel: { rotate: 30, fontSize: 10 } },
      // Room below and above, as the uplift chart: the smallest total would
      // sit on the grid's edge, where hovering shows nothing.
      yAxis: { type: 'value', name: 'bytes', scale: true, boundaryGap: ['10%', '10%'] },
      dataZoom: pts.length > 60 ? [{ type: 'inside' }, { type: 'slider', height: 16, bottom: 4 }] : [],
      series: [
        // Every point drawn: one between two breaks has no segment to show it.
        { name: 'default', type: 'line', step: 'end', data: totals(defaults), showAllSymbol: true,
          markLine: { symbol: 'none', silent: true, lineStyle: { color: '#d62728', type: 'dashed' },
                      data: culpritLines(pts, culprits) } },
        { name: 'learned', type: 'line', step: 'end', data: totals(learned), showAllSymbol: true },
        { name: 'default', type: 'scatter', data: partials(defaults) },
        { name: 'learned', type: 'scatter', data: partials(learned) }
      ]
    });
    return chart;
  }

  // Modules as rows, check-ins as columns; colour = the module's uplift,
  // 1 - learned/default, signed as the uplift charts are (green: the learned
  // policy wins, red: it loses).
  var sorts = {
    'worst now': function (m) { return -(last(m.ratios) || 0); },
    'most changed': function (m) { return -(range(m.ratios)); },
    'flips win→loss': function (m) { return -m.flips; },
    'name': null
  };
  function last(xs) { for (var i = xs.length - 1; i >= 0; --i) if (xs[i] !== null) return xs[i]; return null; }
  function range(xs) {
    var lo = Infinity, hi = -Infinity;
    xs.forEach(function (x) { if (x !== null) { lo = Math.min(lo, x); hi = Math.max(hi, x); } });
    return hi > lo ? hi - lo : 0;
  }

  function heatmap(section, box, s, pts) {
    var modules = s.modules.map(function (name, j) {
      var ratios = pts.map(function (p) { return p.ratios.length ? p.ratios[j] : null; });
      var flips = 0, prev = null;  // across the gaps: the previous measured ratio
      ratios.forEach(function (r) { if (r === null) return; if (prev !== null && prev < 1 && r > 1) ++flips; prev = r; });
      return { name: name, ratios: ratios, flips: flips };
    });
    var controls = el('div', { 'class': 'controls' });
    var filter = el('input', { type: 'search', placeholder: 'filter modules', 'aria-label': 'filter modules' });
    var sort = el('select', { 'aria-label': 'sort modules' });
    Object.keys(sorts).forEach(function (k) { sort.appendChild(el('option', { value: k }, 'sort: ' + k)); });
    var count = el('span', { 'class': 'count' });
    controls.appendChild(filter); controls.appendChild(sort); controls.appendChild(count);
    section.insertBefore(controls, box);
    var chart = init(box);
    var printing = false;  // every row at once, for paper (no slider to drag there)
    var screenHeight = box.style.height;
    function shown() {
      var f = filter.value.toLowerCase();
      return modules.filter(function (m) { return m.name.toLowerCase().indexOf(f) >= 0; });
    }
    function draw() {
      chart.dwFinished = false;
      var rows = shown();
      var key = sorts[sort.value];
      rows.sort(function (a, b) { return key ? key(a) - key(b) || (a.name < b.name ? -1 : 1) : (a.name < b.name ? -1 : 1); });
      rows.reverse();  // the category axis draws its first row at the bottom
      count.textContent = rows.length + ' of ' + modules.length + ' modules';
      var cells = [];
      rows.forEach(function (m, y) {
        m.ratios.forEach(function (r, x) { if (r !== null) cells.push([x, y, +((1 - r) * 100).toFixed(3)]); });
      });
      var visible = printing ? rows.length : Math.min(rows.length, 40);
      chart.setOption({
        animation: false,
        title: { text: 'per module on ' + s.name + ': uplift, 1 − learned/default .text (%)', textStyle: { fontSize: 14 } },
        grid: { left: 160, right: 70, top: 40, bottom: 60 },
        tooltip: {
          confine: true, extraCssText: 'max-width: 480px; white-space: normal;',
          formatter: function (c) {
            var p = pts[c.value[0]], m = rows[c.value[1]];
            var v = c.value[2];
            return '<b>' + enc(m.name) + '</b>: uplift ' + (v > 0 ? '+' : v < 0 ? '−' : '') + Math.abs(v) + '% (' +
                (v > 0 ? 'smaller under the policy' : v < 0 ? 'larger under the policy' : 'the same size') + ')<br>' +
                commitHtml(p);
          }
        },
        xAxis: { type: 'category', data: pts.map(label), axisLabel: { rotate: 30, fontSize: 10 } },
        yAxis: { type: 'category', data: rows.map(function (m) { return m.name; }), axisLabel: { fontSize: 10 } },
        visualMap: {
          min: -10, max: 10, calculable: true, orient: 'vertical', right: 0, top: 'middle', itemHeight: 120,
          formatter: function (v) { return (v > 0 ? '+' : '') + v.toFixed(1) + '%'; },
          inRange: { color: ['#d73027', '#f7f7f7', '#1a9850'] }
        },
        dataZoom: rows.length > visible
          ? [{ type: 'slider', yAxisIndex: 0, right: 40, width: 14, startValue: rows.length - visible, endValue: rows.length - 1 },
             { type: 'inside', yAxisIndex: 0 }]
          : [],
        // Drawn in one go for paper: the print is taken right after.
        series: [{ type: 'heatmap', data: cells, progressive: printing ? 0 : 5000 }]
      }, { notMerge: true });
    }
    filter.addEventListener('input', draw);
    sort.addEventListener('change', draw);
    draw();
    // Called before and after printing: a canvas prints as drawn, so the
    // 40-row window with its slider would cut the modules off the page.
    var kept = null;  // the screen's window of rows, put back after printing
    chart.dwPrinting = function (on) {
      if (on && !printing) {  // a second beforeprint would keep the printing state
        var z = (chart.getOption().dataZoom || [])[0];
        // The slider keeps percentages, a draw sets values: whichever it has.
        kept = !z ? null : z.start != null && z.end != null ? { start: z.start, end: z.end }
                                                             : { startValue: z.startValue, endValue: z.endValue };
      }
      printing = on;
      // ~14 px a row, within the tallest canvas browsers draw (about 32000
      // device pixels: a 2x screen halves it).
      // The chart's own ratio, fixed when the page loaded (a zoom since does not change it).
      var tallest = Math.floor(32000 / Math.max(1, chart.getDevicePixelRatio()));
      box.style.height = on ? Math.min(tallest, 140 + 14 * shown().length) + 'px' : screenHeight;
      chart.resize();
      draw();
      if (!on && kept && (chart.getOption().dataZoom || []).length)
        chart.dispatchAction(Object.assign({ type: 'dataZoom', dataZoomIndex: 0 }, kept));
    };
    return chart;
  }

  var root = document.getElementById('charts');
  data.suites.forEach(function (s) {
    // Every check-in of the series gets a column: a failed build or a check-in
    // where the policy could not run is a gap, not two neighbours joined.
    var pts = s.points;
    var section = el('section', { 'class': 'suite', 'data-suite': s.name });
    section.appendChild(el('h2', {}, 'Suite ' + s.name));
    root.appendChild(section);
    if (!pts.some(function (p) { return p.evaluated; })) {
      // A sweep that tried and failed must not read as one that never ran.
      var unusable = pts.filter(function (p) { return p.evaluation_error; });
      // Why, as the overview says it (a failed build elsewhere is not "none built").
      var overview = (data.overview || []).filter(function(o) {
        return o.suite === s.name;
      })[0];
      var said = overview && overview.unmeasured;
      var why = unusable.length ?
          'The policy cannot run on this suite since ' + name(unusable[0].sha) + ': ' + unusable[0].evaluation_error :
          said ? said.charAt(0).toUpperCase() + said.slice(1) + '.' :
                 'No evaluated check-in on this suite yet.';
      section.appendChild(el('p', { 'class': 'empty' }, why));
      return;
    }
    var row = el('div', { 'class': 'row' });
    var up = el('div', { 'class': 'chart', id: 'uplift-' + s.name });
    var tot = el('div', { 'class': 'chart', id: 'totals-' + s.name });
    row.appendChild(up); row.appendChild(tot); section.appendChild(row);
    var heat = el('div', { 'class': 'heatmap', id: 'modules-' + s.name });
    heat.style.height = Math.min(640, 140 + 18 * s.modules.length) + 'px';  // 40 rows show at once, then a slider
    section.appendChild(heat);
    charts[s.name] = {
      uplift: upliftChart(up, s, pts, marks(s.name)),
      totals: totalsChart(tot, s, pts, marks(s.name)),
      modules: heatmap(section, heat, s, pts)
    };
  });
  window.addEventListener('resize', function () {
    Object.keys(charts).forEach(function (k) {
      ['uplift', 'totals', 'modules'].forEach(function (c) { charts[k][c].resize(); });
    });
  });
  function printing(on) {
    Object.keys(charts).forEach(function (k) {
      charts[k].modules.dwPrinting(on);
      ['uplift', 'totals'].forEach(function (c) { charts[k][c].resize(); });
    });
  }
  window.addEventListener('beforeprint', function () { printing(true); });
  window.addEventListener('afterprint', function () { printing(false); });
  document.body.setAttribute('data-drawn', 'true');
})();
