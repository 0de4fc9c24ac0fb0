#!/usr/bin/env bash
# Soak: a long run at a high constant rate of streams, mock and loadgen side by side, with the
# resident memory (RSS) of both sampled every 10 s. Pass: no failed request, and neither
# process's RSS in the last minute more than 10% (and 8 MiB) above its level in the second
# minute. Writes bench-out/soak/{rss.csv,result.json,summary.txt}.
#
# Usage: scripts/soak.sh   (SOAK_SECONDS=600 RATE=4000 TOKENS=16)
# Layout on a 2-core machine: the mock on CPU 1 (one worker), loadgen on CPU 0.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${SOAK_SECONDS:-600}
rate=${RATE:-4000}
tokens=${TOKENS:-16}
out="$root/bench-out/soak"
port=18650
mkdir -p "$out"
. "$root/scripts/lib/build.sh"
build_release -p mock-upstream -p loadgen
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT

taskset -c 1 "$root/target/release/mock-upstream" --listen "127.0.0.1:$port" --threads 1 \
  --tokens "$tokens" 2>"$out/mock.log" &
pids+=($!)
mock_pid=$!
. "$root/scripts/lib/ports.sh"
wait_answers "http://127.0.0.1:$port/health" || true

"$root/target/release/loadgen" run --target "http://127.0.0.1:$port/v1/chat/completions" \
  --scenario chat-stream --rate "$rate" --duration "${seconds}s" --warmup 5s --connections 256 \
  --cores 0 --quiet --upstream-metrics "http://127.0.0.1:$port/metrics" \
  --out "$out/result.json" >"$out/loadgen.txt" 2>&1 &
pids+=($!)
loadgen_pid=$!

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
echo "second,mock_rss_kib,loadgen_rss_kib" >"$out/rss.csv"
started=$(date +%s)
while kill -0 "$loadgen_pid" 2>/dev/null; do
  echo "$(( $(date +%s) - started )),$(rss_kib "$mock_pid"),$(rss_kib "$loadgen_pid")" >>"$out/rss.csv"
  sleep 10
done
wait "$loadgen_pid" && code=0 || code=$?

python3 - "$out" "$seconds" "$code" <<'PY' | tee "$out/summary.txt"
import csv, json, sys
out, seconds, code = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [r for r in csv.DictReader(open(f"{out}/rss.csv")) if int(r["mock_rss_kib"]) > 0]
result = json.load(open(f"{out}/result.json"))
run = result["runs"][0]
def level(key, lo, hi):
    vals = sorted(int(r[key]) for r in rows if lo <= int(r["second"]) < hi and int(r[key]) > 0)
    return vals[len(vals) // 2] if vals else 0
ok = code == 0 and run["failed"] == 0
print(f"soak: {seconds} s of {run['scenario']} at {result['plan']['load']['rate']:.0f} req/s: "
      f"{run['requests']} requests, {run['ok']} ok, {run['failed']} failed {run['errors']}, "
      f"achieved {run['achieved_rate']:.1f}/s, valid {run['validity']['valid']}, exit {code}")
for key, name in [("mock_rss_kib", "mock"), ("loadgen_rss_kib", "loadgen")]:
    early, late = level(key, 60, 120), level(key, seconds - 60, seconds + 10)
    peak = max(int(r[key]) for r in rows)
    grew = late - early
    flat = grew <= max(early * 0.10, 8192)
    ok = ok and flat
    print(f"  {name}: RSS median {early / 1024:.1f} MiB in minute 2, {late / 1024:.1f} MiB in "
          f"the last minute (peak {peak / 1024:.1f} MiB): {'flat' if flat else 'GROWING'}")
print("soak:", "passed" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY
