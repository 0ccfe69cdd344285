#!/usr/bin/env bash
# Figures for running sweeps on a farm, on this machine:
#   1. a sweep of the 8-week history (weekly: 9 check-ins, 18 jobs) with 1
#      worker and with 2, each from nothing (its own data directory, embedded
#      database and work tree; ccache left as the machine has it, since both
#      runs see the same one);
#   2. ccache's remote storage: the sample compiler built in a clean work tree
#      with an empty local ccache, once to fill a redis-server on 127.0.0.1 and
#      once more elsewhere, with the second build's remote hit rate.
#
#   bench/farm.sh [SCRATCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DW="$PWD/build/bin/driftwatch"
ROOT="${1:-$(mktemp -d /tmp/driftwatch-farm.XXXXXX)}"
POLICY="$PWD/samples/policies/sample-compiler-v1.0.policy"
mkdir -p "$ROOT"
chmod 755 "$ROOT"
echo "scratch: $ROOT; $(nproc) cores"

[ -d "$ROOT/repo" ] || "$DW" --data-dir "$ROOT/tmp" sample-history "$ROOT/repo" --history tests/data/history-8w.toml >/dev/null
json="["
for f in hashtable ini json sort utf8; do
  json+="$([ "$json" = "[" ] || echo ,){\"directory\": \"$PWD/samples/testdata\", \"file\": \"$f.c\", \"command\": \"cc -Oz -c $f.c\"}"
done
echo "$json]" >"$ROOT/compile_commands.json"

sweep_with() {  # WORKERS
  local data="$ROOT/w$1" start end
  rm -rf "$data"
  mkdir -p "$data"
  "$DW" --data-dir "$data" suite build --from-compile-commands "$ROOT/compile_commands.json" --name testdata >/dev/null
  "$DW" --data-dir "$data" init "$data/proj" --repo "$ROOT/repo" --policy "$POLICY" --name "w$1" >/dev/null
  sed -i -e 's/names = \["holdout"\]/names = ["testdata"]/' -e 's/bisect = true/bisect = false/' "$data/proj/driftwatch.toml"
  "$DW" --data-dir "$data" db start >/dev/null
  start=$(date +%s.%N)
  "$DW" --data-dir "$data" sweep --config "$data/proj/driftwatch.toml" --workers "$1" -q >"$data/sweep.out" 2>&1
  end=$(date +%s.%N)
  echo "== $1 worker(s): $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s wall"
  grep -E "^sweep|^time in jobs" "$data/sweep.out"
  "$DW" --data-dir "$data" db stop >/dev/null
}

sweep_with 1
sweep_with 2

# --- remote ccache ------------------------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$ROOT" >"$ROOT/redis.log" 2>&1 &
redis=$!
trap 'kill $redis 2>/dev/null || true' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
sed "s|^launcher = \"ccache\"|ccache_remote_storage = \"redis://127.0.0.1:$port\"\nlauncher = \"ccache\"|" \
  samples/recipes/sample-compiler.toml >"$ROOT/recipe.toml"
build_in() {  # NAME: a clean data directory and an empty local ccache
  rm -rf "$ROOT/$1" "$ROOT/ccache-$1"
  local start end
  start=$(date +%s.%N)
  CCACHE_DIR="$ROOT/ccache-$1" CCACHE_BASEDIR="$ROOT" "$DW" --data-dir "$ROOT/$1" build --repo "$ROOT/repo" \
    --recipe "$ROOT/recipe.toml" --commit main -j "$(nproc)" >"$ROOT/$1.out" 2>&1
  end=$(date +%s.%N)
  "$DW" --data-dir "$ROOT/$1" db stop >/dev/null  # `build` started the data directory's database
  CCACHE_DIR="$ROOT/ccache-$1" ccache --print-stats >"$ROOT/$1.stats"
  stat() { awk -v k="$1" '$1 == k { print $2 }' "$ROOT/$2.stats"; }
  local hit miss
  hit=$(stat remote_storage_hit "$1")
  miss=$(stat remote_storage_miss "$1")
  echo "== build in $1: $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s wall;" \
    "remote ccache $hit hit(s), $miss miss(es): hit rate $(awk -v h="$hit" -v m="$miss" 'BEGIN { printf "%.0f%%", (h + m) ? 100 * h / (h + m) : 0 }')"
}
build_in first
build_in second
