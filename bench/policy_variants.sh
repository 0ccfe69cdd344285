#!/usr/bin/env bash
# The policy variants weighed for the shipped policy, side by side, each
# trained on one greedy search (the costly part, run once) and judged on the
# validation suite only, as training chooses: for each, the validation
# uplift of the model as trained and of the margin training chose.
#
#   bench/policy_variants.sh DATA_DIR TRAIN_SUITE [SEARCHED_WORK_DIR]
#
# DATA_DIR holds the sample year (DATA_DIR/year) and the validation suite;
# TRAIN_SUITE is a suite name or directory (the 21-package `train`).
# SEARCHED_WORK_DIR is a finished `driftwatch train` work directory of the
# same suite, compiler and seed whose search results are reused (default:
# the first variant searches, about 25 minutes on 2 cores); each variant
# then takes 3 to 8 minutes. Policies go to DATA_DIR/variants/.
# ONLY=PATTERN runs the variants whose name matches (grep -E).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bench/policy_variants.sh DATA_DIR TRAIN_SUITE [SEARCHED_WORK_DIR]" >&2; exit 2; }
DW="$PWD/build/bin/driftwatch"
DATA=$(realpath "$1"); SUITE=$2; SEARCHED=${3:-}
mkdir -p "$DATA/variants"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# name | options beyond the shipped command's common part
variants=(
  "alone-64x64|--hidden 64,64 --imitation-epochs 150"
  "residual-64x64|--residual-margin 3 --hidden 64,64 --imitation-epochs 150"
  "residual-16-wd1e-3|--residual-margin 3 --hidden 16 --imitation-epochs 40 --weight-decay 1e-3"
  "residual-32x32-flip2|--residual-margin 3 --hidden 32,32 --imitation-epochs 60 --weight-decay 1e-4 --flip-weight 2"
  "residual-32x32-flip4|--residual-margin 3 --hidden 32,32 --imitation-epochs 60 --weight-decay 1e-4 --flip-weight 4"
  "residual-32x32-flip2-e100|--residual-margin 3 --hidden 32,32 --imitation-epochs 100 --weight-decay 1e-4 --flip-weight 2"
  "residual-64x64-flip2|--residual-margin 3 --hidden 64,64 --imitation-epochs 60 --weight-decay 1e-4 --flip-weight 2"
)

printf '%-28s %12s %22s\n' variant "as trained" "chosen margin"
for v in "${variants[@]}"; do
  name=${v%%|*}; opts=${v#*|}
  [ -n "${ONLY:-}" ] && ! grep -qE "$ONLY" <<<"$name" && continue
  work="$DATA/training/variant-$name-1"
  resume=()
  if [ -n "$SEARCHED" ] && [ ! -d "$work" ]; then
    mkdir -p "$work"
    cp -r "$SEARCHED"/{run.json,collected.json,search,validation,probe} "$work"/
  fi
  [ -d "$work/search" ] && resume=(--resume)
  rm -f "$work"/checkpoint.json "$work"/checkpoint-*  # imitation afresh, the search kept
  # shellcheck disable=SC2086
  SOURCE_DATE_EPOCH=1764547200 "$DW" --data-dir "$DATA" train --repo "$DATA/year" --recipe sample-compiler \
    --build v1.0 --suite "$SUITE" --validation validation --seed 1 --search-trials 8 --iterations 0 -j 2 \
    --name "variant-$name" --out "$DATA/variants/variant-$name.policy" "${resume[@]}" $opts >"$log/$name" 2>&1
  trained=$(sed -n 's/^\[imitated\] uplift \([^,]*\),.*/\1/p' "$log/$name")
  chosen=$(sed -n 's/^margin \([^:]*\):.*/\1/p' "$log/$name")
  final=$(sed -n 's/^uplift on the validation suite: \([^ ]*\) geometric mean.*; \(.*\)$/\1 (\2)/p' "$log/$name")
  printf '%-28s %12s   margin %-6s %s\n' "$name" "$trained" "$chosen" "$final"
done
