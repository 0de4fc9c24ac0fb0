#!/usr/bin/env bash
# Two builds of loadgen side by side against one nginx returning a fixed chat completion (one
# worker pinned to CPU 1), each client pinned to CPU 0, interleaved round by round (A, B, A, B
# ...): what a change to loadgen cost.
# 1. Throughput, closed loop: `loadgen run --concurrency 64` for SECONDS; requests/s per round and
#    the median ratio B/A.
# 2. The floor at 5,000 req/s open loop: the CO-corrected response time p50 and p99 and the
#    schedule lag p99 of each build, per round.
#
# Usage: scripts/bench-loadgen-ab.sh A_BINARY B_BINARY [ROUNDS] [SECONDS]   (defaults 5 rounds of 5 s)
# Build A from an older commit with, e.g.:
#   git worktree add /tmp/base COMMIT && CARGO_TARGET_DIR=/tmp/base-target \
#     cargo build --release -p loadgen --manifest-path /tmp/base/Cargo.toml
# Needs: nginx, curl (apt-get install nginx curl), python3.
set -euo pipefail

a_bin=${1:?usage: bench-loadgen-ab.sh A_BINARY B_BINARY [ROUNDS] [SECONDS]}
b_bin=${2:?usage: bench-loadgen-ab.sh A_BINARY B_BINARY [ROUNDS] [SECONDS]}
rounds=${3:-5}
seconds=${4:-5}
port=18561
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/scripts/lib/tools.sh"
require_tool bench-loadgen-ab nginx curl taskset python3
. "$root/scripts/lib/ports.sh"
require_free_ports bench-loadgen-ab "$port"

url="http://127.0.0.1:$port/v1/chat/completions"
. "$root/scripts/lib/nginx.sh"
. "$root/scripts/lib/stats.sh"
start_completion_nginx "$work" "$port" 1

# field FILE PYTHON-EXPRESSION-ON-r: one figure of a run's result.
field() {
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; print($2)" "$1"
}

echo "round | A req/s | B req/s | B/A | A p50/p99/lag p99 µs at 5k | B p50/p99/lag p99 µs at 5k"
ratios=()
for round in $(seq "$rounds"); do
  line="$round"
  for bin in "$a_bin" "$b_bin"; do
    taskset -c 0 "$bin" run --target "$url" --concurrency 64 --connections 64 \
      --duration "${seconds}s" --warmup 1s --quiet --out "$work/closed.json" >/dev/null
    rate=$(field "$work/closed.json" "round(r['throughput'])")
    line="$line | $rate"
    eval "rate_$([ "$bin" = "$a_bin" ] && echo a || echo b)=$rate"
  done
  ratio=$(python3 -c "print(round($rate_b / $rate_a, 3))")
  ratios+=("$ratio")
  line="$line | $ratio"
  for bin in "$a_bin" "$b_bin"; do
    taskset -c 0 "$bin" run --target "$url" --rate 5000 --duration "${seconds}s" --warmup 1s \
      --quiet --out "$work/open.json" >/dev/null
    floor=$(field "$work/open.json" \
      "'%d/%d/%d' % (r['metrics']['response_time']['p50'], r['metrics']['response_time']['p99'], r['metrics']['schedule_lag']['p99'])")
    line="$line | $floor"
  done
  echo "$line"
done
median_ratio=$(median_mean "${ratios[@]}")
echo "median B/A, closed-loop throughput: $median_ratio"
