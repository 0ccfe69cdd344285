#!/usr/bin/env bash
# Retraining on the sample compiler's year, at its last check-in, with the
# shipped training settings: a monthly sweep of the shipped policy, decide,
# then retrain (timed: wall time on this machine), and what the candidate
# and the active policy measure on the held-out suite at the same build.
# Also prints how much of the uplift lost since the first swept check-in the
# candidate recovered.
#
#   bench/retrain_year.sh [DATA_DIR] [HOLDOUT] [TRAIN] [SETTINGS] [VALIDATION]
#       (default: a scratch dir, holdout, train, shipped, validation; VALIDATION
#       "" trains without a validation suite)
#
# The suites are built from Debian source packages the first time (as the
# demo does); pass a data directory that holds them to skip that.
set -euo pipefail
cd "$(dirname "$0")/.."
DW="${DRIFTWATCH:-$PWD/build/bin/driftwatch}"  # another binary: DRIFTWATCH=…
DATA="${1:-$(mktemp -d /tmp/driftwatch-retrain.XXXXXX)}"
HOLDOUT="${2:-holdout}"
TRAIN="${3:-train}"
SETTINGS="${4:-shipped}"
VALIDATION="${5-validation}"
POLICY="$PWD/samples/policies/sample-compiler-v1.0.policy"
mkdir -p "$DATA"
chmod 755 "$DATA"
dw() { "$DW" --data-dir "$DATA" "$@"; }

[ -d "$DATA/year" ] || dw sample-history "$DATA/year"
dw suite build "$HOLDOUT" >/dev/null
dw suite build "$TRAIN" >/dev/null
[ -z "$VALIDATION" ] || dw suite build "$VALIDATION" >/dev/null
P="$DATA/retrain-bench"
mkdir -p "$P"
dw init "$P" --repo "$DATA/year" --policy "$POLICY" --name retrain-bench --force >/dev/null
sed -i -e "s/names = \[\"holdout\"\]/names = [\"$HOLDOUT\"]/" -e 's/every = "1w"/every = "1m"/' \
  -e "s/training_suite = \"train\"/training_suite = \"$TRAIN\"/" -e "s/settings = \"shipped\"/settings = \"$SETTINGS\"/" \
  -e "s/validation_suite = \"\"/validation_suite = \"$VALIDATION\"/" \
  -e 's/bisect = true/bisect = false/' "$P/driftwatch.toml"  # decide reads the series; culprits are not needed

echo "== monthly sweep of the shipped policy"
dw sweep --config "$P/driftwatch.toml" -q | grep -E "^sweep|^drift" || true
echo
echo "== decide"
dw decide --config "$P/driftwatch.toml" || true
echo
dw decide --config "$P/driftwatch.toml" --json >"$DATA/decide.json" 2>/dev/null || true
echo "== retrain at the last check-in ($SETTINGS settings, $(nproc) cores)"
start=$(date +%s.%N)
status=0
dw retrain --config "$P/driftwatch.toml" >"$DATA/retrain.out" 2>&1 || status=$?
end=$(date +%s.%N)
grep -vE "^\[" "$DATA/retrain.out" | tail -n 8
echo "retrain: exit status $status, $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s wall"
echo
echo "== uplift recovered"
dw policy list --config "$P/driftwatch.toml" --json >"$DATA/lineage.json"
python3 - "$DATA/decide.json" "$DATA/lineage.json" <<'PY'
import json, sys
decision = json.load(open(sys.argv[1]))
rows = json.load(open(sys.argv[2]))
cand = rows[-1]
f = cand.get("figures", {})
a, c = f.get("active", {}).get("uplift"), f.get("candidate", {}).get("uplift")
if a is None or c is None:
    print("no candidate figures"); sys.exit(0)
series = decision["suites"][0]["series"]
base = series[0]["uplift"]
print(f"baseline ({'training check-in' if decision['suites'][0]['baseline_measured'] else 'first swept check-in'} "
      f"{series[0]['sha'][:12]}): {100*base:+.2f}%")
print(f"held-out at the last check-in: active {100*a:+.2f}%, candidate {100*c:+.2f}% ({cand['state']})")
lost = base - a
if lost > 0:
    print(f"uplift lost since the baseline: {100*lost:.2f} points; recovered by the candidate: {100*(c-a):.2f} points "
          f"= {100*(c-a)/lost:.0f}%")
else:
    print(f"no uplift lost since the baseline ({100*lost:+.2f} points); candidate gain {100*(c-a):+.2f} points")
PY
