#!/usr/bin/env bash
# Benchmarks of loadgen's workloads, against the mock on loopback (mock on CPU 0, loadgen on
# CPU 1, one thread each), side by side in each round:
# 1. Corpora: closed-loop throughput (64 in flight) with one body, with a corpus of 10,000
#    distinct small requests (about 100 bytes of prompt), and with a corpus of 10,000 distinct
#    requests of 100 B to 100 KB (log-uniform prompt sizes); each corpus's ratio to one body.
# 2. The same three at a constant 5,000 req/s: schedule lag p50 and p99 (the generator's own
#    timing error).
# 3. Trace replay: a Poisson trace and an evenly spaced trace of 5,000 req/s, replayed; the lag
#    between each row's recorded instant and its dispatch (p50, p99), beside the same rate's
#    own Poisson schedule (--arrival poisson), whose bursts delay a request by the sending of
#    the one before it alike.
# 4. Capacity: a mock answering in 10 ms over at most 20 connections (20 / 10 ms = 2,000 req/s),
#    searched within p99<50ms,errors<1% from 500 req/s: the bracket found and its runs.
#
# Usage: scripts/bench-workloads.sh [ROUNDS] [SECONDS] [PARTS]
#   defaults: 3 rounds of 5 s; PARTS is a comma-separated subset of corpus,lag,trace,capacity.
# Needs: python3, taskset.
set -euo pipefail

rounds=${1:-3}
seconds=${2:-5}
parts=${3:-corpus,lag,trace,capacity}
part() { [[ ",$parts," == *",$1,"* ]]; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/scripts/lib/build.sh"
build_release -p mock-upstream --bin mock-upstream
build_release -p loadgen --bin loadgen
mock_bin="$root/target/release/mock-upstream"
loadgen="$root/target/release/loadgen"
port=18531
target="http://127.0.0.1:$port/v1/chat/completions"
. "$root/scripts/lib/ports.sh"
. "$root/scripts/lib/stats.sh"

start_mock() {
  taskset -c 0 "$mock_bin" --listen "127.0.0.1:$port" --threads 1 "$@" >"$work/mock.log" 2>&1 &
  mock_pid=$!
  wait_answers -f "http://127.0.0.1:$port/health" 50 0.1 && return
  echo "bench-workloads: the mock did not start" >&2; exit 1
}
stop_mock() { kill "$mock_pid" 2>/dev/null; wait "$mock_pid" 2>/dev/null || true; }

# field FILE EXPR: a value of the first run of a loadgen result.
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; print($2)" "$1"; }

"$loadgen" corpus --out "$work/small.jsonl" --count 10000 --seed 1 --prompt-tokens fixed:25 \
  --output-tokens fixed:16 2>/dev/null
"$loadgen" corpus --out "$work/mixed.jsonl" --count 10000 --seed 2 --prompt-tokens lognormal:1000,1.6 \
  --max-prompt-tokens 25000 --output-tokens fixed:16 2>&1 | sed 's/^/  /'
python3 - "$work/small.jsonl" "$work/mixed.jsonl" <<'PY'
import json, sys
for path in sys.argv[1:]:
    sizes = sorted(len(json.dumps(json.loads(l)["body"], separators=(",", ":"))) for l in open(path))
    print(f"  {path.rsplit('/',1)[1]}: {len(sizes)} bodies, {sizes[0]} to {sizes[-1]} bytes, median {sizes[len(sizes)//2]}")
PY

if part corpus || part lag; then
  start_mock
  declare -A thr lag50 lag99
  for round in $(seq "$rounds"); do
    for kind in one small mixed; do
      case $kind in
        one) what=() ;;
        small) what=(--requests-file "$work/small.jsonl") ;;
        mixed) what=(--requests-file "$work/mixed.jsonl") ;;
      esac
      if part corpus; then
        taskset -c 1 "$loadgen" run --target "$target" "${what[@]}" --concurrency 64 --connections 64 \
          --duration "${seconds}s" --warmup 1s --quiet --out "$work/c.json" >/dev/null
        thr[$kind]+=" $(field "$work/c.json" "r['throughput']")"
      fi
      if part lag; then
        taskset -c 1 "$loadgen" run --target "$target" "${what[@]}" --rate 5000 --duration "${seconds}s" \
          --warmup 1s --quiet --out "$work/l.json" >/dev/null
        lag50[$kind]+=" $(field "$work/l.json" "r['metrics']['schedule_lag']['p50']")"
        lag99[$kind]+=" $(field "$work/l.json" "r['metrics']['schedule_lag']['p99']")"
      fi
    done
    echo "round $round done"
  done
  stop_mock
  for kind in one small mixed; do
    if part corpus; then
      t=$(median_mean ${thr[$kind]})
      one=$(median_mean ${thr[one]})
      printf '  closed loop 64 in flight, %-5s: %9.0f ok/s (rounds:%s), %.3fx one body\n' \
        "$kind" "$t" "${thr[$kind]}" "$(python3 -c "print($t/$one)")"
    fi
    if part lag; then
      printf '  5,000 req/s, %-5s: schedule lag p50 %s us, p99 %s us (rounds p99:%s)\n' \
        "$kind" "$(median_mean ${lag50[$kind]})" "$(median_mean ${lag99[$kind]})" "${lag99[$kind]}"
    fi
  done
fi

if part trace; then
  python3 - "$work" "$seconds" <<'PY'
import random, sys
random.seed(7)
for name, gap in (("poisson", lambda: random.expovariate(5000.0)), ("even", lambda: 1 / 5000.0)):
    t, n = 0.0, 0
    with open(f"{sys.argv[1]}/{name}.csv", "w") as f:
        f.write("timestamp,input_tokens,output_tokens\n")
        while t < float(sys.argv[2]):
            f.write(f"{t:.9f},{random.randint(10, 2000)},{random.randint(1, 50)}\n")
            t += gap()
            n += 1
    print(f"  trace {name}: {n} rows over {sys.argv[2]} s (5,000 req/s)")
PY
  start_mock
  declare -A t50 t99
  for round in $(seq "$rounds"); do
    for kind in poisson even schedule; do
      case $kind in
        schedule) what=(--rate 5000 --arrival poisson --duration "${seconds}s") ;;
        *) what=(--trace "$work/$kind.csv") ;;
      esac
      taskset -c 1 "$loadgen" run --target "$target" "${what[@]}" --quiet --out "$work/t.json" >/dev/null
      t50[$kind]+=" $(field "$work/t.json" "r['metrics']['schedule_lag']['p50']")"
      t99[$kind]+=" $(field "$work/t.json" "r['metrics']['schedule_lag']['p99']")"
    done
  done
  stop_mock
  for kind in poisson even schedule; do
    echo "  5,000 req/s, $kind: dispatch after the intended instant p50 $(median_mean ${t50[$kind]}) us, p99 $(median_mean ${t99[$kind]}) us (rounds p99:${t99[$kind]})"
  done
fi

if part capacity; then
  start_mock --latency 10ms --max-connections 20
  "$loadgen" capacity --slo "p99<50ms,errors<1%" --start-rate 500 --direct "$target" \
    --duration "${seconds}s" --warmup 1s --connections 20 --timeout 5s --quiet \
    --cores 1 --out "$work/cap.json" | sed 's/^/  /'
  stop_mock
fi
