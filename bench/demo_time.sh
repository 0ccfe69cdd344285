#!/usr/bin/env bash
# The demo's wall time from nothing, and a rerun's: in a brand-new Debian 12
# root when a fresh-machine tool is given (what the README quotes), else on
# this machine with an empty data directory (packages and ccache as they are
# here: not "from nothing"; scripts/demo reconfigures build/ as Release).
#
#   bench/demo_time.sh [FRESH_MACHINE_TOOL]     e.g. ../shared/tools/fresh-machine
#
# Prints the seconds spent installing packages, building driftwatch and
# running the demo, the total, and a rerun's seconds with its exit status.
set -euo pipefail
cd "$(dirname "$0")/.."
measure='s=$(date +%s); bash scripts/setup --demo >/tmp/setup.log 2>&1; echo "setup: $(( $(date +%s)-s )) s";
s2=$(date +%s); bash scripts/demo >/tmp/demo.log 2>&1; rc=$?; tail -8 /tmp/demo.log;
echo "build and demo: $(( $(date +%s)-s2 )) s (exit $rc); from nothing: $(( $(date +%s)-s )) s";
s3=$(date +%s); build/bin/driftwatch demo >/dev/null 2>&1; rc=$?; echo "rerun: $(( $(date +%s)-s3 )) s (exit $rc)"'
if [ $# -ge 1 ]; then
  # npm in a fresh root may not trust the registry mirror's certificate chain.
  exec "$1" "export npm_config_strict_ssl=false; $measure"
fi
export DRIFTWATCH_DATA_DIR="${DRIFTWATCH_DATA_DIR:-$(mktemp -d /tmp/driftwatch-demo.XXXXXX)}"
echo "data: $DRIFTWATCH_DATA_DIR"
bash -c "$measure"
