#!/usr/bin/env bash
# A gateway's memory under load, as a table (BENCHMARKS.md "A gateway's memory under load"):
# `loadgen profile --memory` on the mock itself, as if it were a gateway (loadgen's own
# allocations per request come with it), then `MEMORY=1 scripts/gateways/NAME.sh` for each of
# GATEWAYS (logging off and on where the gateway has such a setting), and one Markdown table of
# every result (scripts/lib/memory_table.py): allocations and bytes per request with their
# intervals, memory at rest before and after, the peak, the probes' cost, the source and what it
# counts. Results in bench-out/memory/ and bench-out/gateways/NAME/.
#
# Usage: scripts/bench-memory.sh [GATEWAYS]   (default "nginx haproxy traefik caddy portkey
#        litellm"; PROFILE_RATE, default 200; PROFILE_FLAGS for more profile options)
# Needs: root and bpftrace (C allocator), cc, python3; each gateway script installs its own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gateways=${1:-nginx haproxy traefik caddy portkey litellm}
out="$root/bench-out/memory"
mkdir -p "$out"
. "$root/scripts/lib/build.sh"
build_release -p mock-upstream -p loadgen
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# The mock as the gateway: CPU 1, loadgen on CPU 0.
taskset -c 1 "$root/target/release/mock-upstream" --listen 127.0.0.1:18690 --threads 1 \
  2>"$work/mock.log" &
mock_pid=$!
. "$root/scripts/lib/ports.sh"
wait_answers http://127.0.0.1:18690/health 200
# shellcheck disable=SC2086 # PROFILE_FLAGS is split into options on purpose
"$root/target/release/loadgen" profile --preset "$root/presets/gateway-profile.toml" --memory \
  --pid "$mock_pid" --gateway mock=http://127.0.0.1:18690/v1/chat/completions \
  ${PROFILE_RATE:+--rate "$PROFILE_RATE"} ${PROFILE_FLAGS:-} --cores 0 --quiet \
  --out "$out/mock-memory.json" || true
kill "$mock_pid"

results=("$out/mock-memory.json")
for g in $gateways; do
  echo "== memory: $g" >&2
  MEMORY=1 "$root/scripts/gateways/$g.sh" || echo "bench-memory: $g failed" >&2
  for f in "$root/bench-out/gateways/$g"/profile-memory*.json; do
    [ -f "$f" ] && results+=("$f")
  done
done
python3 "$root/scripts/lib/memory_table.py" "${results[@]}" | tee "$out/table.md"
echo "table in $out/table.md" >&2
