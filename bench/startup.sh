#!/usr/bin/env bash
# Start-up cost of the driftwatch binary, side by side in one run: a command
# that never loads LibTorch (--version; alerts, jobs, report and decide start
# the same way) against `policy info`, which loads a policy's network and with
# it LibTorch (bin/driftwatch-torch.so, policy/torch_backend.h).
#   bench/startup.sh [BINARY] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin/driftwatch}
runs=${2:-20}
policy=samples/policies/sample-compiler-v1.0.policy

mean_seconds() {
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$runs"); do "$@" >/dev/null; done
  end=$(date +%s%N)
  awk -v s="$start" -v e="$end" -v n="$runs" 'BEGIN { printf "%.3f", (e - s) / n / 1e9 }'
}

printf "%-44s %10s\n" "command ($runs runs each, interleaved)" "mean (s)"
no_torch=0 torch=0
for round in 1 2; do
  no_torch=$(mean_seconds "$bin" --version)
  torch=$(mean_seconds "$bin" policy info "$policy")
done
printf "%-44s %10s\n" "driftwatch --version (no LibTorch)" "$no_torch"
printf "%-44s %10s\n" "driftwatch policy info (loads LibTorch)" "$torch"
