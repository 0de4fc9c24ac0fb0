#!/usr/bin/env bash
# Benchmark of sharding and interval logs, against the mock (release build) pinned on CPU 1,
# every loadgen process pinned on CPU 0, interleaved per round (the first two in turns):
#   one      one process at the whole rate (the baseline)
#   hdr-log  the same with --hdr-log (per-second interval logs of every metric)
#   shards   N processes with --shard I/N and one --start-at, merged by `loadgen merge`
# for a non-streaming scenario at RATE and a streaming one (16 tokens) at STREAM_RATE.
# Reports, per configuration, the medians over rounds of the achieved rate, the schedule lag,
# the CO-corrected response time, the generators' CPU, the result and log sizes, and the time
# `loadgen merge` took; and checks every merged count against the sum of its shards.
#
# Usage: scripts/bench-shards.sh [ROUNDS] [SECONDS] [SHARDS]   (defaults: 3, 20, 2)
#        RATE (default 5000), STREAM_RATE (default 2000) in the environment.
# Needs: curl, taskset, python3.
set -euo pipefail

rounds=${1:-3}
seconds=${2:-20}
shards=${3:-2}
rate=${RATE:-5000}
stream_rate=${STREAM_RATE:-2000}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/scripts/lib/tools.sh"
require_tool bench-shards curl taskset python3
. "$root/scripts/lib/build.sh"
build_release -p loadgen -p mock-upstream
loadgen="$root/target/release/loadgen"
port=18541
url="http://127.0.0.1:$port/v1/chat/completions"
taskset -c 1 "$root/target/release/mock-upstream" --listen "127.0.0.1:$port" --threads 1 \
  >"$work/mock.log" 2>&1 &
. "$root/scripts/lib/ports.sh"
wait_answers "http://127.0.0.1:$port/health" || true

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
echo "mock on CPU 1; every loadgen process on CPU 0; ${rounds} rounds of ${seconds}s; ${shards} shards"
echo

# run NAME SCENARIO RATE EXTRA...: one process, result in $work/NAME.json
run_one() {
  local name=$1 scenario=$2 r=$3; shift 3
  "$loadgen" run --target "$url" --rate "$r" --duration "${seconds}s" --warmup 2s \
    --scenario "$scenario" --connections 64 --cores 0 --quiet --out "$work/$name.json" "$@" \
    >/dev/null || true
}

for round in $(seq "$rounds"); do
  for spec in "chat:$rate" "chat-stream:$stream_rate"; do
    scenario=${spec%%:*}; r=${spec##*:}
    # The two single-process runs swap places every round, so neither always runs first.
    if [ $((round % 2)) -eq 1 ]; then
      run_one "one-$scenario-$round" "$scenario" "$r"
    fi
    rm -rf "$work/hlog"
    run_one "hdrlog-$scenario-$round" "$scenario" "$r" --hdr-log "$work/hlog"
    du -sb "$work/hlog" | awk '{print $1}' >"$work/hdrlog-$scenario-$round.bytes"
    if [ $((round % 2)) -eq 0 ]; then
      run_one "one-$scenario-$round" "$scenario" "$r"
    fi
    at=$(date -u -d '+3 sec' +%Y-%m-%dT%H:%M:%S.000Z)
    pids=()
    for i in $(seq 0 $((shards - 1))); do
      run_one "shard$i-$scenario-$round" "$scenario" "$r" --shard "$i/$shards" --start-at "$at" &
      pids+=($!)
    done
    wait "${pids[@]}"
    files=()
    for i in $(seq 0 $((shards - 1))); do files+=("$work/shard$i-$scenario-$round.json"); done
    start=$(date +%s.%N)
    "$loadgen" merge "${files[@]}" --out "$work/merged-$scenario-$round.json" >/dev/null || true
    end=$(date +%s.%N)
    echo "$start $end" | awk '{printf "%.3f\n", $2 - $1}' >"$work/merged-$scenario-$round.seconds"
  done
  echo "round $round done" >&2
done

python3 - "$work" "$rounds" "$shards" <<'PY'
import json, os, statistics, sys
work, rounds, shards = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def load(name):
    return json.load(open(os.path.join(work, name + ".json")))
def med(xs):
    return statistics.median(xs)
for scenario in ("chat", "chat-stream"):
    rows = {}
    for config in ("one", "hdrlog", "merged"):
        acc = {k: [] for k in ("rate", "lag99", "lag999", "p50", "p99", "p999", "cpu", "size", "extra")}
        for r in range(1, rounds + 1):
            d = load(f"{config}-{scenario}-{r}")
            run = d["runs"][0]
            m = run["metrics"]
            acc["rate"].append(run["achieved_rate"])
            acc["lag99"].append(m["schedule_lag"]["p99"])
            acc["lag999"].append(m["schedule_lag"]["p999"])
            acc["p50"].append(m["response_time"]["p50"])
            acc["p99"].append(m["response_time"]["p99"])
            acc["p999"].append(m["response_time"]["p999"])
            acc["cpu"].append(run["generator_cpu_cores"])
            if config == "merged":
                parts = [load(f"shard{i}-{scenario}-{r}") for i in range(shards)]
                acc["size"].append(sum(os.path.getsize(os.path.join(work, f"shard{i}-{scenario}-{r}.json")) for i in range(shards)))
                acc["extra"].append(float(open(os.path.join(work, f"merged-{scenario}-{r}.seconds")).read()))
                for field in ("requests", "ok", "failed", "dispatched"):
                    total = sum(p["runs"][0][field] for p in parts)
                    assert run[field] == total, (scenario, r, field, run[field], total)
            else:
                acc["size"].append(os.path.getsize(os.path.join(work, f"{config}-{scenario}-{r}.json")))
                if config == "hdrlog":
                    acc["extra"].append(int(open(os.path.join(work, f"hdrlog-{scenario}-{r}.bytes")).read()))
        rows[config] = acc
    print(f"## {scenario}: medians of {rounds} rounds")
    print()
    print("| configuration | achieved (req/s) | lag p99 | lag p99.9 | response p50 | p99 | p99.9 | generator CPU (cores) | result JSON | other |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    names = {"one": "one process", "hdrlog": "one process, --hdr-log", "merged": f"{shards} shards, merged"}
    for config, acc in rows.items():
        other = ""
        if config == "hdrlog":
            other = f"logs {med(acc['extra']) / 1024:.0f} KiB"
        if config == "merged":
            other = f"merge took {med(acc['extra']):.2f} s; counts = sums in every round"
        print(f"| {names[config]} | {med(acc['rate']):.1f} | {med(acc['lag99'])} µs | {med(acc['lag999'])} µs | "
              f"{med(acc['p50'])} µs | {med(acc['p99'])} µs | {med(acc['p999'])} µs | {med(acc['cpu']):.3f} | "
              f"{med(acc['size']) / 1024:.0f} KiB | {other} |")
    print()
    print("per round (lag p99 µs, response p99 µs): " + "; ".join(
        f"{c}: " + ", ".join(f"{a}/{b}" for a, b in zip(rows[c]["lag99"], rows[c]["p99"])) for c in rows))
    print()
PY
