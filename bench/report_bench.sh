#!/usr/bin/env bash
# The drift report at scale: renders a synthetic 365-check-in × 500-module
# history (build/bench/report_bench), then opens it in Debian's headless
# Chromium (tests/browser/report_check.mjs) and prints the page's load time,
# the time until every chart is drawn, and what was drawn. Hovers a culprit too.
#
#   bench/report_bench.sh [CHECKINS] [MODULES]     (needs bash scripts/web-deps)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(mktemp -d /tmp/driftwatch-report-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
build/bench/report_bench "$OUT" "${1:-365}" "${2:-500}"
culprit=$(node -e 'const i=59;console.log(((Math.imul(2654435761,i+1))>>>0).toString(16).padStart(8,"0")+i.toString(16).padStart(32,"0"))')
for run in 1 2 3; do
  node tests/browser/report_check.mjs "$OUT/index.html" "$OUT/shot.png" "$culprit" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);
      const c=r.charts.holdout||{};
      console.log(`chromium run '"$run"': load ${r.load_ms} ms, all charts drawn ${r.drawn_ms} ms, settled ${r.settled_ms} ms, re-sorting the heatmap ${r.resort_ms} ms; ` +
        `points ${c.uplift_points}, heatmap ${c.heatmap_columns}×${c.heatmap_rows} (${c.heatmap_cells} cells); ` +
        `console errors ${r.console_errors.length}; hover ${r.tooltip ? "ok" : "none"}${r.error ? "; error " + r.error : ""}`)})'
done
