# Shared by bench-mock.sh and bench-mock-ab.sh: the timing precision of one mock-upstream build,
# on loopback, the mock pinned to CPU 0 (one worker) and every client to CPU 1.
# - a --latency 3ms and a --latency 200us mock, each paired against a 0 ms mock by loadgen
#   overhead (the difference must be 3,000 / 200 µs), with the mock's default timer, with
#   --spin 0 (the kernel's wake-up alone) and with --spin 50us, with the timer's own figures;
# - 1,000 simultaneous 60-token streams at ttft 20 ms, itl 20 ms (oha): one stream alone against
#   the slowest of the 1,000, the mock's CPU, its core's load, its emission error;
# - 500 streams at ttft 50 ms, itl 10 ms kept up for SECONDS (wrk): the same figures.
# Usage: mock_precision MOCK_BIN LOADGEN_BIN PORT OTHER_PORT SECONDS WORK
# Needs: curl, wrk, oha, python3.

. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

mock_precision() {
  local bin=$1 loadgen=$2 port=$3 other=$4 seconds=$5 work=$6
  local url="http://127.0.0.1:$port/v1/chat/completions"
  # No max_tokens: as long as the mock's --tokens.
  local body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"stream":true}'
  printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' \
    "'$body'" >"$work/precision-stream.lua"

  # --latency 3ms and 200us against a 0 ms mock, paired rounds: with the mock's default timer
  # (a build that has `--spin auto` learns its margin), on the kernel's wake-up alone (--spin 0),
  # and spinning a fixed last 50 µs.
  local direct delayed spin spin_flag latency
  for spin in default 0 50us; do
    spin_flag=()
    if [ "$spin" != default ]; then
      # An older build without --spin measures the kernel's wake-up only, as its default.
      "$bin" --help | grep -q -- --spin || continue
      spin_flag=(--spin "$spin")
    fi
    for latency in 3ms 200us; do
    direct=$(precision_start "$bin" "$port" "${spin_flag[@]}")
    delayed=$(precision_start "$bin" "$other" --latency "$latency" "${spin_flag[@]}")
    # The method of the figures this row is compared with: 3 trials x 150 rounds, no twin (a
    # loadgen that has --twin defaults to ten trials of 50 and a twin row).
    local method=()
    if "$loadgen" overhead --help | grep -q -- --twin; then
      method=(--twin none --trials 3 --rounds 150)
    fi
    taskset -c 1 "$loadgen" overhead --direct "$url" \
      --gateway "latency=http://127.0.0.1:$other/v1/chat/completions" --scenario chat \
      "${method[@]}" --out "$work/precision-overhead.json" >/dev/null
    python3 - "$work/precision-overhead.json" "$spin" "$latency" <<'PY'
import json, sys
for trial in json.load(open(sys.argv[1]))["trials"]:
    for delta in (d for d in trial["deltas"] if d["gateway"] == "latency"):
        added = delta["added_us"]
        spin = "the default --spin" if sys.argv[2] == "default" else f"--spin {sys.argv[2]}"
        print(f"--latency {sys.argv[3]} with {spin} paired against 0 ms, trial {trial['trial']}: added "
              f"{added['estimate']:.1f} µs [{added['low']:.1f}, {added['high']:.1f}] over {delta['pairs']} pairs")
PY
    echo "  emission error of the $latency mock: $(emission_error "$other")"
    echo "  its timer: $(timer_facts "$other")"
    precision_stop "$delayed"
    precision_stop "$direct"
    done
  done

  # 1,000 simultaneous 60-token streams at 20 ms, with the default timer and with --spin 0.
  local pid one before after core_before core_after slowest
  for spin in default 0; do
  spin_flag=()
  [ "$spin" != default ] && spin_flag=(--spin "$spin")
  pid=$(precision_start "$bin" "$port" --ttft 20ms --itl 20ms --tokens 60 "${spin_flag[@]}")
  one=$(curl -s -o /dev/null -w '%{time_total}' "$url" -d "$body")
  before=$(process_ticks "$pid"); core_before=$(core_ticks)
  taskset -c 1 oha --no-tui -n 1000 -c 1000 -m POST -T application/json -d "$body" "$url" \
    >"$work/precision-oha.out"
  after=$(process_ticks "$pid"); core_after=$(core_ticks)
  slowest=$(awk '/Slowest/ {print $2}' "$work/precision-oha.out")
  echo "1,000 streams x 60 tokens at 20 ms ($([ "$spin" = default ] && echo "default timer" || echo "--spin $spin")): one stream alone ${one} s, slowest of 1,000 ${slowest} s" \
    "($(awk -v a="$slowest" -v b="$one" 'BEGIN {printf "%.3f", a / b}')x), mock CPU" \
    "$(ticks_as_seconds $((after - before))) s, $(core_share "$core_before" "$core_after")," \
    "$(grep -m1 'Success rate' "$work/precision-oha.out" | xargs)"
  echo "  emission error: $(emission_error "$port")"
  echo "  its timer: $(timer_facts "$port")"
  precision_stop "$pid"
  done

  # 500 streams at ttft 50 ms, itl 10 ms, kept up for the run.
  pid=$(precision_start "$bin" "$port" --ttft 50ms --itl 10ms --tokens 60)
  before=$(process_ticks "$pid"); core_before=$(core_ticks)
  taskset -c 1 wrk -t1 -c500 -d"${seconds}s" -s "$work/precision-stream.lua" "$url" >"$work/precision-wrk.out"
  after=$(process_ticks "$pid"); core_after=$(core_ticks)
  echo "500 streams, ttft 50 ms, itl 10 ms, ${seconds} s: $(awk '/Requests\/sec/ {print $2}' "$work/precision-wrk.out")" \
    "streams/s, mock CPU $(awk -v t="$(ticks_as_seconds $((after - before)))" -v s="$seconds" 'BEGIN {printf "%.2f", t / s}')" \
    "cores, $(core_share "$core_before" "$core_after")"
  echo "  emission error: $(emission_error "$port")"
  precision_stop "$pid"
}

precision_start() { # BIN PORT [FLAGS...] -> pid, once the mock answers
  local bin=$1 port=$2
  shift 2
  require_free_ports mock_precision "$port"
  # Its output must not hold the caller's command substitution open.
  taskset -c 0 "$bin" --listen "127.0.0.1:$port" --threads 1 "$@" >/dev/null 2>&1 &
  local pid=$!
  if wait_answers "http://127.0.0.1:$port/health"; then
    echo "$pid"
    return 0
  fi
  echo "mock_precision: $bin did not start on port $port" >&2
  return 2
}

precision_stop() { # PID: stops the mock and waits until it is gone (it is not this shell's child)
  kill "$1" 2>/dev/null || true
  while kill -0 "$1" 2>/dev/null; do sleep 0.05; done
}

process_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

ticks_as_seconds() { awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}'; }

# CPU 0's busy, softirq and total ticks: loopback packet work runs in softirq, which the kernel
# does not charge to the process, so the process's own CPU undercounts the load on its core.
core_ticks() { awk '/^cpu0 / {print $2 + $3 + $4 + $7 + $8, $8, $2 + $3 + $4 + $5 + $6 + $7 + $8}' /proc/stat; }

core_share() { # BEFORE AFTER (each "busy softirq total") -> "CPU 0 busy x% (softirq y%)"
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); t = y[3] - x[3];
    printf "CPU 0 busy %.0f%% (softirq %.0f%%)", 100 * (y[1] - x[1]) / t, 100 * (y[2] - x[2]) / t }'
}

timer_facts() { # PORT -> the mock's timer lines from /metrics (margin, lateness, spun), if it has them
  curl -s "http://127.0.0.1:$1/metrics" | grep -E '^mock_timer_' | grep -v '^#' | awk '{printf "%s%s", sep, $0; sep = "; "} END {print ""}'
}

emission_error() { # PORT -> the mock's emission error quantiles from /metrics, in µs
  curl -s "http://127.0.0.1:$1/metrics" |
    sed -n 's/^mock_emission_error_seconds{quantile="\([0-9.]*\)"} \([0-9.e-]*\)$/\1 \2/p' |
    awk '{ printf "%s%s %.0f µs", sep, ($1 == 1 ? "max" : "p" $1 * 100), $2 * 1e6; sep = ", " } END { print "" }'
}
