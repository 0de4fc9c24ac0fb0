#!/usr/bin/env bash
# Shards on a real swarm against one nginx, each merged result beside one process's at the same
# rate: for each round, for 1, 2 and 4 shards, `LOCAL=1 scripts/swarm/run.sh N` (two daemons of
# its own, tasks in containers on the host's network) and then one `loadgen run` of the same
# preset on the host, against nginx answering a fixed chat completion on 127.0.0.1 (one worker
# on CPU 1). A gatebench mock is the shards' clock reference. Prints one row per run: shards,
# requests, achieved rate, response time p50/p99, schedule lag p99, valid.
#
# Usage: scripts/bench-swarm.sh [ROUNDS] [RATE] [DURATION]   (default 2 1000 10s)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-2}
rate=${2:-1000}
duration=${3:-10s}
. "$root/scripts/lib/nginx.sh"
. "$root/scripts/lib/build.sh"
build_release -p mock-upstream -p loadgen
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
nginx_port=18680
mock_port=18681
require_free_ports bench-swarm "$nginx_port" "$mock_port"
start_completion_nginx "$work" "$nginx_port" 1
"$root/target/release/mock-upstream" --listen "127.0.0.1:$mock_port" >/dev/null 2>&1 &
wait_answers -f "http://127.0.0.1:$mock_port/health"
cat >"$work/preset.toml" <<TOML
target = ["http://127.0.0.1:$nginx_port/v1/chat/completions"]
clock-ref = "http://127.0.0.1:$mock_port"
rate = "$rate"
arrival = "constant"
duration = "$duration"
warmup = "1s"
scenario = "chat"
connections = 16
threads = 1
timeout = "10s"
grace = "2s"
spin = "0"
quiet = true
TOML
row() {
  python3 - "$1" "$2" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
run = r["runs"][0]
m = run["metrics"]
print(f"| {label} | {run['requests']} | {run['achieved_rate']:.1f} | {m['response_time']['p50']} | {m['response_time']['p99']} | {m['schedule_lag']['p99']} | {'yes' if r['valid'] else 'no'} |")
PY
}
echo "| run | requests | achieved (req/s) | p50 (µs) | p99 (µs) | lag p99 (µs) | valid |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for round in $(seq "$rounds"); do
  for shards in 1 2 4; do
    OUT=$work/swarm-$round-$shards PRESET=$work/preset.toml MOCK_PORT=18682 LOCAL=1 \
      "$root/scripts/swarm/run.sh" "$shards" >"$work/out" 2>"$work/err" || true
    if [ -f "$work/swarm-$round-$shards/merged.json" ]; then
      row "round $round: $shards shard(s) on the swarm" "$work/swarm-$round-$shards/merged.json"
    else
      echo "| round $round: $shards shard(s) on the swarm | failed: $(tail -n 2 "$work/err" | tr '\n' ' ') |"
    fi
    "$root/target/release/loadgen" run --preset "$work/preset.toml" --out "$work/single.json" \
      >/dev/null 2>&1 || true
    row "round $round: one process beside it" "$work/single.json"
  done
done
