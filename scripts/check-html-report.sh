#!/usr/bin/env bash
# Renders every kind of loadgen result as HTML and opens each page in headless Chromium: each must
# render (a screenshot is taken) with no console error. Everything runs on loopback: a mock, and
# the mock again under a second name as the "gateway".
#
# Usage: scripts/check-html-report.sh [OUT_DIR]   (default: a temporary folder, kept)
# Needs: chromium (apt).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
. "$root/scripts/lib/tools.sh"
require_tool check-html-report chromium
. "$root/scripts/lib/build.sh"
build_release -p loadgen -p mock-upstream
bin="$root/target/release"
port=18541
"$bin/mock-upstream" --listen "127.0.0.1:$port" --threads 1 >/dev/null 2>&1 &
mock=$!
trap 'kill $mock 2>/dev/null || true' EXIT
url="http://127.0.0.1:$port/v1/chat/completions"
. "$root/scripts/lib/ports.sh"
wait_answers "http://127.0.0.1:$port/health" || true

"$bin/loadgen" run --target "$url" --rate 500 --duration 3s --scenario chat-stream --quiet --out "$out/run.json" >/dev/null
"$bin/loadgen" overhead --direct "$url" --gateway "same=$url" --rounds 50 --trials 2 --quiet --out "$out/overhead.json" >/dev/null
"$bin/loadgen" compare --direct "$url" --gateway "same=$url" --rate 500 --duration 2s --trials 2 --quiet --out "$out/compare.json" >/dev/null
"$bin/loadgen" sweep --direct "$url" --gateway "same=$url" --levels 1,4,16 --duration 1s --trials 2 --quiet --out "$out/sweep.json" >/dev/null
"$bin/loadgen" ladder --direct "$url" --gateway "same=$url" --levels 10,50,100 --settle 200ms --sample-pid "mock=$mock" --quiet --out "$out/ladder.json" >/dev/null
# The mock stands for the gateway; perf samples it where the machine allows (the page is checked
# either way: without perf it says why there is no flame graph).
"$bin/loadgen" profile --direct "$url" --gateway "same=$url" --pid "$mock" --rate 500 --duration 2s --warmup 500ms --trials 2 --quiet --out "$out/profile.json" >/dev/null

failed=0
for kind in run overhead compare sweep ladder profile; do
  "$bin/loadgen" report "$out/$kind.json" --format html --out "$out/$kind.html"
  log="$out/$kind.chromium.log"
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$out/browser-$kind" --enable-logging=stderr --v=0 \
    --window-size=1200,2400 --screenshot="$out/$kind.png" "file://$out/$kind.html" >"$log" 2>&1 || true
  size=$(stat -c %s "$out/$kind.png" 2>/dev/null || echo 0)
  errors=$(grep -c 'CONSOLE\|Uncaught' "$log" || true)
  if [ "$size" -lt 10000 ] || [ "$errors" -ne 0 ]; then
    echo "FAIL $kind: screenshot $size bytes, $errors console message(s); see $log"
    failed=1
  else
    echo "ok   $kind: $out/$kind.png ($size bytes), no console message"
  fi
done
exit "$failed"
