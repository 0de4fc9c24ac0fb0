#!/usr/bin/env bash
# Instructions loadgen spends per request, counted by callgrind (deterministic: the same binary,
# load and count give the same figure on a busy or an idle machine). loadgen runs under callgrind
# twice against the mock (outside callgrind), sending N and N + 10,000 requests closed-loop over
# 8 connections; the difference over 10,000 is the cost of one request with start-up and
# shutdown cancelled. With two binaries, each is counted and the ratio printed: what a change to
# loadgen's request path cost, free of this machine's wall-clock noise.
#
# Usage: scripts/callgrind-loadgen.sh [LOADGEN_A [LOADGEN_B]] [-- extra loadgen run flags]
#   default: this checkout's release build; extra flags like --requests-file corpus.jsonl or
#   --scenario chat-stream.
# Needs: valgrind (apt-get install valgrind), curl.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
binaries=()
while [[ $# -gt 0 && $1 != "--" ]]; do binaries+=("$1"); shift; done
[[ ${1:-} == "--" ]] && shift
extra=("$@")
. "$root/scripts/lib/tools.sh"
require_tool callgrind-loadgen valgrind
. "$root/scripts/lib/build.sh"
build_release -p mock-upstream --bin mock-upstream
build_release -p loadgen --bin loadgen
[[ ${#binaries[@]} -eq 0 ]] && binaries=("$root/target/release/loadgen")
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port=18591
"$root/target/release/mock-upstream" --listen "127.0.0.1:$port" --threads 1 >/dev/null 2>&1 &
. "$root/scripts/lib/ports.sh"
wait_answers -f "http://127.0.0.1:$port/health" 50 0.1 || true

count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$1" run \
    --target "http://127.0.0.1:$port/v1/chat/completions" --concurrency 8 --connections 8 \
    --requests "$2" --quiet "${extra[@]}" >/dev/null 2>"$work/cg.err"
  grep -E 'Collected' "$work/cg.err" | awk '{print $NF}'
}

per=()
for bin in "${binaries[@]}"; do
  small=$(count "$bin" 2000)
  large=$(count "$bin" 12000)
  one=$(( (large - small) / 10000 ))
  per+=("$one")
  echo "$bin: $one instructions per request"
done
if [[ ${#per[@]} -eq 2 ]]; then
  python3 -c "import sys; a, b = map(int, sys.argv[1:]); print(f'B/A {b / a:.4f} ({(b / a - 1) * 100:+.2f}%)')" "${per[@]}"
fi
