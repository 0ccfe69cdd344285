#!/usr/bin/env bash
# Sweeps the sample compiler's year twice and prints what each found:
#   1. monthly sampling with automatic bisection (what a team runs), then
#   2. every first-parent check-in evaluated (the ground truth; weekly here).
# The culprits of (1) must be exactly the check-ins where (2) shows the
# uplift or either total moving. Also prints each sweep's wall time, its
# split into checkout, build, evaluate and store, the sweep's own overhead,
# and bisection's evaluations against ceil(log2 n).
#
#   bench/sweep_year.sh [DATA_DIR] [SUITE]    (default: a scratch dir, holdout)
#
# Both sweeps share one data directory and database, so the weekly sweep
# reuses the builds and evaluations the monthly one made (jobs are keyed by
# what they compute); run it on an empty directory for cold figures.
set -euo pipefail
cd "$(dirname "$0")/.."
DW="$PWD/build/bin/driftwatch"
DATA="${1:-$(mktemp -d /tmp/driftwatch-year.XXXXXX)}"
SUITE="${2:-holdout}"
POLICY="$PWD/samples/policies/sample-compiler-v1.0.policy"
mkdir -p "$DATA"
chmod 755 "$DATA"
dw() { "$DW" --data-dir "$DATA" "$@"; }

[ -d "$DATA/year" ] || dw sample-history "$DATA/year"
dw suite build "$SUITE" >/dev/null

project() {  # NAME EVERY BISECT
  mkdir -p "$DATA/$1"
  dw init "$DATA/$1" --repo "$DATA/year" --policy "$POLICY" --name "$1" --force >/dev/null
  sed -i -e "s/names = \[\"holdout\"\]/names = [\"$SUITE\"]/" -e "s/every = \"1w\"/every = \"$2\"/" \
    -e "s/bisect = true/bisect = $3/" "$DATA/$1/driftwatch.toml"
  # Any step of a size is real: take every one, to compare the two sweeps strictly.
  sed -i -e 's/min_uplift_change = 0.002/min_uplift_change = 0/' -e 's/min_total_change = 0.002/min_total_change = 0/' \
    "$DATA/$1/driftwatch.toml"
}

run() {  # NAME
  local start end
  start=$(date +%s.%N)
  dw sweep --config "$DATA/$1/driftwatch.toml" -q >"$DATA/$1.out" 2>&1 || true
  end=$(date +%s.%N)
  echo "== $1: $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s wall"
  grep -E "^sweep|^time in jobs|^drift|^  (NEW|   )" "$DATA/$1.out" || cat "$DATA/$1.out"
}

project monthly 1m true
project weekly 1 false
run monthly
run weekly

echo
echo "== culprits (monthly, bisected) vs changes (weekly, every check-in)"
culprits() { grep -E "^  (NEW|   )" "$DATA/$1.out" | grep -oE ': [0-9a-f]{12} ' | tr -d ': ' | sort -u; }
diff <(culprits monthly) <(culprits weekly) && echo "identical: $(culprits monthly | tr '\n' ' ')"
echo
echo "== bisection: evaluations used against ceil(log2 n) per change"
grep -oE '\[[0-9]+ of [0-9]+ check-ins evaluated\]' "$DATA/monthly.out" | tr -d '[]' | while read -r k _ n _; do
  bound=$(awk -v n=$((n + 1)) 'BEGIN { b = 0; while (2 ^ b < n) b++; print b }')
  echo "  $k evaluations for $n check-ins between two samples (ceil(log2 $((n + 1))) = $bound)"
done
echo
echo "== a second sweep of each, everything done"
for p in monthly weekly; do
  start=$(date +%s.%N)
  dw sweep --config "$DATA/$p/driftwatch.toml" -q | grep -E "^sweep"
  echo "  $p again: $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s wall"
done
