#!/usr/bin/env bash
# Benchmarks of loadgen against nginx returning a fixed chat completion, pinned on CPU 1, with
# every client pinned on CPU 0, interleaved in one run with wrk and oha, every row with loadgen's
# defaults beside `--spin 1s` (a core spent busy-polling: the most precise setting there is):
# 1. (throughput) Maximum throughput, closed loop, 64 connections: loadgen --concurrency 64,
#    wrk -c64, oha -c64.
# 2. (low) Low rates against the mock (one worker on CPU 1): the machine's own timerfd lateness,
#    then schedule lag p50 / p99 and loadgen's CPU at 200 req/s for 1 s (unpinned, and pinned to
#    CPU 0), and in a 200-request trace replay 5 ms apart; defaults and --spin 1s interleaved.
# 3. (floor) The measurement floor at 5,000 req/s open loop: loadgen's CO-corrected response time,
#    schedule lag and CPU with defaults and with --spin 1s, beside oha -q 5000 --latency-correction.
# 4. (idle) The same floor with nginx's core kept out of idle by a SCHED_IDLE spinner (the
#    clients' own floor).
# 5. (rates) The defaults beside --spin 1s at every rate of RATES (default 1000 5000 20000
#    50000 req/s, open loop against nginx), interleaved: each one's p50, p99, schedule lag p99,
#    CPU and achieved rate, and per rate the median of the rounds' --spin 1s p99 / defaults p99
#    (spinning must never be worse).
# 6. (rss) loadgen's RSS over a long run at 5,000 req/s (histograms, not per-request vectors).
# 7. (long) A LONG_SECONDS (default 300) run at 5,000 req/s with defaults: schedule lag, validity.
#
# Usage: scripts/bench-loadgen.sh [ROUNDS] [SECONDS] [RSS_SECONDS] [PARTS]
#   defaults: 3, 10, 60, throughput,low,floor,idle,rates,rss,long; LONG_SECONDS=300;
#   RATES="1000 5000 20000 50000".
# Needs: wrk, nginx, curl (apt), oha (cargo install oha --locked), python3.
set -euo pipefail

rounds=${1:-3}
seconds=${2:-10}
rss_seconds=${3:-60}
parts=${4:-throughput,low,floor,idle,rates,rss,long}
long_seconds=${LONG_SECONDS:-300}
part() { [[ ",$parts," == *",$1,"* ]]; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/scripts/lib/tools.sh"
require_tool bench-loadgen wrk nginx oha curl taskset chrt python3
. "$root/scripts/lib/build.sh"
build_release -p loadgen -p mock-upstream --bin mock-upstream
build_release -p gatebench-shared --example timer_floor
loadgen="$root/target/release/loadgen"

port=18531
url="http://127.0.0.1:$port/v1/chat/completions"
body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}'

. "$root/scripts/lib/nginx.sh"
. "$root/scripts/lib/stats.sh"
start_completion_nginx "$work" "$port" 1

cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA

lg_json() { # extract a field of the first run from a result file
  python3 -c "import json,sys; r=json.load(open('$1'))['runs'][0]; print(eval(sys.argv[1]))" "$2"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
echo "nginx $(nginx -v 2>&1 | cut -d/ -f2) on CPU 1; clients on CPU 0; $(oha --version); wrk $(wrk --version 2>&1 | head -1 | awk '{print $2}')"
if part throughput; then
echo
echo "## Maximum throughput, closed loop, 64 connections, ${seconds}s (requests/s)"
printf "%-6s %12s %12s %12s %10s %10s\n" round wrk oha loadgen "lg/wrk" "lg/oha"
r_wrk=(); r_oha=()
for round in $(seq "$rounds"); do
  w=$(taskset -c 0 wrk -t1 -c64 -d"${seconds}s" -s "$work/post.lua" "$url" | awk '/Requests\/sec/ {print $2}')
  o=$(taskset -c 0 oha --no-tui -c 64 -z "${seconds}s" -m POST -T application/json -d "$body" --output-format json "$url" \
      | python3 -c "import json,sys; print(round(json.load(sys.stdin)['summary']['requestsPerSec'],1))")
  "$loadgen" run --target "$url" --concurrency 64 --connections 64 --duration "${seconds}s" --cores 0 --quiet --out "$work/lg.json" >/dev/null || true
  l=$(lg_json "$work/lg.json" "round(r['throughput'],1)")
  a=$(awk -v a="$l" -v b="$w" 'BEGIN {printf "%.3f", a / b}'); b=$(awk -v a="$l" -v b="$o" 'BEGIN {printf "%.3f", a / b}')
  r_wrk+=("$a"); r_oha+=("$b")
  printf "%-6s %12s %12s %12s %10s %10s\n" "$round" "$w" "$o" "$l" "$a" "$b"
done
echo "median loadgen/wrk $(median "${r_wrk[@]}"), loadgen/oha $(median "${r_oha[@]}")"
fi

if part low; then
. "$root/scripts/lib/low_rate.sh"
low_rate "$loadgen" "$root/target/release/mock-upstream" "$root/target/release/examples/timer_floor" 18533 "$rounds" "$work"
fi

at_rate() { # RATE [loadgen flags] -> "p50 p99 lag cpu rate valid"
  local rate=$1
  shift
  rm -f "$work/lg.json"
  "$loadgen" run --target "$url" --rate "$rate" --duration "${seconds}s" --cores 0 "$@" --quiet --out "$work/lg.json" >/dev/null || true
  [[ -s $work/lg.json ]] || { echo "- - - - - FAILED"; return; }
  python3 -c "import json; d=json.load(open('$work/lg.json')); r=d['runs'][0]; m=r['metrics']
print(m['response_time']['p50'], m['response_time']['p99'], m['schedule_lag']['p99'], round(r['generator_cpu_cores'], 2), round(r['achieved_rate']), 'valid' if d['valid'] else 'INVALID')"
}
floor() { at_rate 5000 "$@"; }
oha_5000() { # -> "p50 p99" in µs
  taskset -c 0 oha --no-tui -c 64 -q 5000 --latency-correction -z "${seconds}s" -m POST -T application/json -d "$body" \
      --output-format json "$url" >"$work/oha.json"
  python3 -c "import json; p=json.load(open('$work/oha.json'))['latencyPercentiles']; print(round(p['p50']*1e6), round(p['p99']*1e6))"
}

if part floor; then
echo
echo "## Floor at 5,000 req/s open loop, ${seconds}s (CO-corrected response time, microseconds)"
echo "loadgen with its defaults, and with --spin 1s (busy-polls: one core); CPU in cores"
printf "%-6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n" round "def p50" "def p99" "lag p99" "def CPU" "spin p50" "spin p99" "lag p99" "CPU" "oha p50" "oha p99"
r_def_spin=(); r_def_oha=(); r_spin_oha=(); d99=(); s99=(); o99=()
for round in $(seq "$rounds"); do
  read -r a50 a99 alag acpu arate avalid <<<"$(floor)"
  read -r b50 b99 blag bcpu brate bvalid <<<"$(floor --spin 1s)"
  read -r op50 op99 <<<"$(oha_5000)"
  d99+=("$a99"); s99+=("$b99"); o99+=("$op99")
  printf "%-6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n" "$round" "$a50" "$a99" "$alag" "$acpu" "$b50" "$b99" "$blag" "$bcpu" "$op50" "$op99"
done
md=$(median "${d99[@]}"); ms=$(median "${s99[@]}"); mo=$(median "${o99[@]}")
echo "medians of p99: defaults $md, --spin 1s $ms, oha $mo µs; defaults / --spin 1s $(awk -v a="$md" -v b="$ms" 'BEGIN {printf "%.2f", a / b}'), defaults / oha $(awk -v a="$md" -v b="$mo" 'BEGIN {printf "%.2f", a / b}'), --spin 1s / oha $(awk -v a="$ms" -v b="$mo" 'BEGIN {printf "%.2f", a / b}')"
fi

if part idle; then
echo
echo "## Floor again, with nginx's core kept out of idle (a SCHED_IDLE spinner on CPU 1)"
echo "A halted virtual CPU wakes slowly; the spinner yields to nginx at once but keeps the core awake,"
echo "so what is left is the clients' own floor. loadgen --spin 1s beside oha, ${seconds}s each."
printf "%-6s %8s %8s %8s %8s %8s %8s\n" round "lg p50" "lg p99" "lag p99" "oha p50" "oha p99" "lg/oha99"
chrt -i 0 taskset -c 1 sh -c 'while :; do :; done' &
spinner=$!
r_floor=()
for round in $(seq "$rounds"); do
  read -r c50 c99 clag ccpu crate cvalid <<<"$(floor --spin 1s)"
  read -r op50 op99 <<<"$(oha_5000)"
  ratio=$(awk -v a="$c99" -v b="$op99" 'BEGIN {printf "%.2f", a / b}')
  r_floor+=("$ratio")
  printf "%-6s %8s %8s %8s %8s %8s %8s\n" "$round" "$c50" "$c99" "$clag" "$op50" "$op99" "$ratio"
done
kill "$spinner"
echo "median loadgen p99 / oha p99: $(median "${r_floor[@]}")"
fi

if part rates; then
echo
echo "## The defaults beside --spin 1s at each rate, open loop, ${seconds}s, $rounds rounds (CO-corrected µs)"
printf "%-7s %-6s %8s %8s %8s %6s %8s %8s %8s %8s %6s %8s %7s\n" rate round "def p50" "def p99" "lag p99" "CPU" "req/s" \
  "spin p50" "spin p99" "lag p99" "CPU" "req/s" "spin/def"
mark() { [[ $1 == valid ]] || echo '*'; }
for rate in ${RATES:-1000 5000 20000 50000}; do
  ratios=()
  for round in $(seq "$rounds"); do
    read -r a50 a99 alag acpu arate avalid <<<"$(at_rate "$rate")"
    read -r b50 b99 blag bcpu brate bvalid <<<"$(at_rate "$rate" --spin 1s)"
    ratio=-
    if [[ $a99 =~ ^[0-9]+$ && $b99 =~ ^[0-9]+$ && $a99 -gt 0 ]]; then
      ratio=$(awk -v a="$b99" -v b="$a99" 'BEGIN {printf "%.2f", a / b}')
      ratios+=("$ratio")
    fi
    printf "%-7s %-6s %8s %8s %8s %6s %8s %8s %8s %8s %6s %8s %7s\n" "$rate" "$round" "$a50" "$a99" "$alag" "$acpu" \
      "$arate$(mark "$avalid")" "$b50" "$b99" "$blag" "$bcpu" "$brate$(mark "$bvalid")" "$ratio"
  done
  echo "$rate req/s: median --spin 1s p99 / defaults p99 ${ratios:+$(median "${ratios[@]}")}"
done
echo "(a rate marked *: that run's own validity check failed, and its result says why; -*: loadgen"
echo "wrote no result, and the round has no ratio)"
fi

if part rss; then
echo
echo "## loadgen RSS at 5,000 req/s over ${rss_seconds}s"
"$loadgen" run --target "$url" --rate 5000 --duration "${rss_seconds}s" --cores 0 --quiet >/dev/null &
lg_pid=$!
sleep 5
echo "after 5 s: $(awk '/VmRSS/ {print $2, $3}' /proc/$lg_pid/status)"
sleep $((rss_seconds - 6))
echo "after $((rss_seconds - 1)) s: $(awk '/VmRSS/ {print $2, $3}' /proc/$lg_pid/status)"
wait "$lg_pid" || true
fi

if part long; then
echo
echo "## ${long_seconds}s at 5,000 req/s with defaults"
"$loadgen" run --target "$url" --rate 5000 --duration "${long_seconds}s" --cores 0 --quiet --out "$work/long.json" >/dev/null || true
python3 - "$work/long.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]
m = r["metrics"]
print(f"schedule lag p50 {m['schedule_lag']['p50']} µs, p99 {m['schedule_lag']['p99']} µs; response time p50 "
      f"{m['response_time']['p50']}, p99 {m['response_time']['p99']} µs; achieved {r['achieved_rate']:.0f} req/s; "
      f"loadgen CPU {r['generator_cpu_cores']:.2f} cores; {'valid' if d['valid'] else 'INVALID: ' + '; '.join(r['validity'].get('reasons', []))}")
PY
fi
