#!/usr/bin/env bash
# Instructions loadgen spends per request, counted by callgrind (deterministic: the same binary,
# load and count give the same figure on a busy or an idle machine). loadgen runs under callgrind
# twice against the mock (outside callgrind), sending N and N + 10,000 requests closed-loop over
# 8 connections; the difference over 10,000 is the cost of one request with start-up and
# shutdown cancelled. With two binaries, each is counted twice (A B B A) and the ratio of their
# means printed: what a change to loadgen's request path cost, free of this machine's wall-clock
# noise.
#
# Usage: scripts/callgrind-loadgen.sh [LOADGEN_A [LOADGEN_B]] [-- extra loadgen run flags]
#   default: this checkout's release build; extra flags like --requests-file corpus.jsonl or
#   --scenario chat-stream. B_FLAGS="--metrics-listen 127.0.0.1:19464" adds flags to the second
#   binary's runs only: one binary given twice then counts what a flag costs.
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

# count BINARY REQUESTS [FLAG...]
count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$1" run \
    --target "http://127.0.0.1:$port/v1/chat/completions" --concurrency 8 --connections 8 \
    --requests "$2" --quiet "${extra[@]}" "${@:3}" >/dev/null 2>"$work/cg.err"
  grep -E 'Collected' "$work/cg.err" | awk '{print $NF}'
}

read -r -a b_flags <<<"${B_FLAGS:-}"
# per_request I: binary I's instructions per request, from one pair of runs.
per_request() {
  local flags=()
  [[ $1 -eq 1 ]] && flags=("${b_flags[@]}")
  local small large
  small=$(count "${binaries[$1]}" 2000 "${flags[@]}")
  large=$(count "${binaries[$1]}" 12000 "${flags[@]}")
  echo $(( (large - small) / 10000 ))
}
# Two binaries are counted in the order A B B A: the count of a later pair of runs moves with
# how warm the mock is (seen: the second binary counted 7-10% more whichever it was), and the
# mirrored order cancels that drift; each binary's figure is the mean of its two pairs.
order=(0)
[[ ${#binaries[@]} -eq 2 ]] && order=(0 1 1 0)
sums=(0 0)
for i in "${order[@]}"; do
  one=$(per_request "$i")
  sums[i]=$(( sums[i] + one ))
  echo "${binaries[$i]} ${b_flags[*]:+$([[ $i -eq 1 ]] && echo "${b_flags[*]}")}: $one instructions per request"
done
if [[ ${#binaries[@]} -eq 2 ]]; then
  python3 -c "import sys; a, b = (int(x) / 2 for x in sys.argv[1:]); print(f'A {a:.0f}, B {b:.0f} (means of A B B A): B/A {b / a:.4f} ({(b / a - 1) * 100:+.2f}%)')" "${sums[@]}"
fi
