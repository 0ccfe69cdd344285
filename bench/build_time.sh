#!/usr/bin/env bash
# A cold build of the driftwatch binary (what `bash scripts/demo` builds), with
# ccache off, in fresh build directories one after the other: one object a
# file, then unity files (a few a library: today's default), both
# RelWithDebInfo, then unity files as Release (what scripts/demo builds: no
# debug information). Prints a table;
# "job seconds" sums each compile's wall time (ninja runs several at once).
#
#   bench/build_time.sh [TARGET]     (default target: driftwatch)
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:-driftwatch}
WORK=$(mktemp -d /tmp/driftwatch-build-time.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export CCACHE_DISABLE=1
run() {  # name, build type, cmake options...
  local name=$1 type=$2; shift 2
  cmake -S . -B "$WORK/$name" -G Ninja -DCMAKE_BUILD_TYPE="$type" -DBUILD_TESTING=OFF "$@" >/dev/null
  local start=$(date +%s.%N)
  cmake --build "$WORK/$name" --target "$TARGET" >/dev/null
  local end=$(date +%s.%N)
  local cpu=$(awk 'NR>1{s+=$2-$1}END{printf "%.0f", s/1000}' "$WORK/$name/.ninja_log")
  local objects=$(awk 'NR>1 && $4 ~ /\.o$/' "$WORK/$name/.ninja_log" | wc -l)
  printf '%-28s %8.0f s %10s s %8s\n' "$name" "$(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')" "$cpu" "$objects"
  rm -rf "${WORK:?}/$name"
}
printf '%-28s %10s %12s %8s\n' "configuration ($TARGET)" "wall" "job seconds" "objects"
run one-object-a-file RelWithDebInfo -DDRIFTWATCH_UNITY_BUILD=OFF
run unity-files RelWithDebInfo -DDRIFTWATCH_UNITY_BUILD=ON
run unity-files-release Release -DDRIFTWATCH_UNITY_BUILD=ON
