#!/usr/bin/env bash
# The figures issue 11 asks of a policy: per suite (train, validation,
# holdout) and per held-out package, the geometric-mean and total .text
# uplift and wins/ties/losses against the default heuristic, at the sample
# history's first check-in (v1.0) and at its last, for each policy given.
# Every figure is one `driftwatch eval --json`; nothing is computed here but
# the table.
#
#   bench/policy_figures.sh DATA_DIR POLICY [POLICY …]
#
# DATA_DIR holds the sample year (DATA_DIR/year, made if missing) and the
# suites (built if missing); evaluations are stored in its database.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bench/policy_figures.sh DATA_DIR POLICY [POLICY …]" >&2; exit 2; }
DW="$PWD/build/bin/driftwatch"
DATA=$1; shift
dw() { "$DW" --data-dir "$DATA" "$@"; }
[ -d "$DATA/year" ] || dw sample-history "$DATA/year" >/dev/null
dw suite build train validation holdout >/dev/null
first=$(git -C "$DATA/year" rev-list --max-parents=0 HEAD | tail -1)
last=$(git -C "$DATA/year" rev-parse HEAD)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for policy in "$@"; do
  for at in "$first" "$last"; do
    for suite in train validation holdout; do
      dw eval --repo "$DATA/year" --build "$at" --suite "$suite" --policy "$policy" --json \
        >"$out/$(basename "$policy")-${at:0:8}-$suite.json"
    done
  done
done

python3 - "$out" "$first" "$last" "$@" <<'EOF'
import json, os, sys
out, first, last, policies = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def row(label, s):
    return f"  {label:<30} {s['modules']:>4} {100*s['uplift']:>+8.2f}% {100*s['total_uplift']:>+8.2f}%   {s['wins']:>3}/{s['ties']:>3}/{s['losses']:>3}  {100*s['no_worse_share']:5.1f}%"
for p in policies:
    name = os.path.basename(p)
    for at, label in ((first, "v1.0 (first check-in)"), (last, "last check-in")):
        print(f"\n{name} at {at[:12]} {label}")
        print(f"  {'suite / package':<30} {'mods':>4} {'geomean':>9} {'total':>9}   wins/ties/losses  no worse")
        for suite in ("train", "validation", "holdout"):
            j = json.load(open(f"{out}/{name}-{at[:8]}-{suite}.json"))
            print(row(suite, j["summary"]))
            if suite == "holdout":
                for pk in j["packages"]:
                    print(row("  holdout/" + pk["package"], pk["summary"]))
EOF
