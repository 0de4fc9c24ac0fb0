# Used by bench-loadgen.sh: loadgen's own timing at low rates, with its defaults beside
# --spin 1s (a core spent busy-polling), interleaved, against one mock worker on CPU 1:
# - the machine's own timerfd lateness (timer_floor), what the defaults must make up for;
# - schedule lag p50 / p99 and loadgen's CPU at 200 req/s for 1 s, unpinned and pinned to CPU 0;
# - the same in a 200-request trace replay, 5 ms apart;
# then, per row, the medians over the rounds and defaults minus --spin 1s.
# Usage: low_rate LOADGEN MOCK TIMER_FLOOR PORT ROUNDS WORK
# Needs: curl, python3.

. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

low_rate() {
  local loadgen=$1 mock=$2 timer_floor=$3 port=$4 rounds=$5 work=$6
  local url="http://127.0.0.1:$port/v1/chat/completions"
  echo
  echo "## Low rates: loadgen's defaults beside --spin 1s, against the mock (one worker on CPU 1)"
  echo "the machine's timerfd, armed N ahead and blocked on (what a sleeping pacer pays):"
  "$timer_floor" | sed 's/^/  /'
  require_free_ports low_rate "$port"
  taskset -c 1 "$mock" --listen "127.0.0.1:$port" --threads 1 >/dev/null 2>&1 &
  local mock_pid=$!
  wait_answers "http://127.0.0.1:$port/health" || { echo "low_rate: the mock did not start" >&2; return 2; }
  python3 -c "
print('timestamp,input_tokens,output_tokens')
for i in range(200): print(f'{i * 0.005:.3f},32,16')" >"$work/low-trace.csv"
  local round mode row
  : >"$work/low.tsv"
  for round in $(seq "$rounds"); do
    for mode in defaults spin1s; do
      local flags=()
      [ "$mode" = spin1s ] && flags=(--spin 1s)
      for row in rate200 rate200-pinned trace200; do
        local load=()
        case $row in
          rate200) load=(--rate 200 --duration 1s) ;;
          rate200-pinned) load=(--rate 200 --duration 1s --cores 0) ;;
          trace200) load=(--trace "$work/low-trace.csv") ;;
        esac
        "$loadgen" run --target "$url" "${load[@]}" "${flags[@]}" --quiet --out "$work/low.json" >/dev/null 2>&1 || true
        python3 - "$work/low.json" "$round" "$mode" "$row" >>"$work/low.tsv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]
lag = r["metrics"]["schedule_lag"]
pacer = d.get("pacer") or r.get("pacer") or {}
margin = pacer.get("margin_us", "")
print("\t".join(map(str, (sys.argv[2], sys.argv[3], sys.argv[4], lag["p50"], lag["p99"],
      round(r["generator_cpu_cores"], 3), "valid" if d["valid"] else "INVALID", margin))))
PY
      done
    done
  done
  kill "$mock_pid" 2>/dev/null; wait "$mock_pid" 2>/dev/null || true
  python3 - "$work/low.tsv" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print(f"{'round':<6} {'mode':<9} {'row':<15} {'lag p50':>8} {'lag p99':>8} {'CPU':>7} {'':>8} {'margin':>7}")
for r in rows:
    print(f"{r[0]:<6} {r[1]:<9} {r[2]:<15} {r[3]:>8} {r[4]:>8} {r[5]:>7} {r[6]:>8} {r[7]:>7}")
med = lambda xs: statistics.median(float(x) for x in xs)
print("medians (µs, cores); defaults minus --spin 1s:")
for row in ("rate200", "rate200-pinned", "trace200"):
    def col(mode, i):
        return [r[i] for r in rows if r[1] == mode and r[2] == row]
    d50, d99, dcpu = med(col("defaults", 3)), med(col("defaults", 4)), med(col("defaults", 5))
    s50, s99, scpu = med(col("spin1s", 3)), med(col("spin1s", 4)), med(col("spin1s", 5))
    invalid = sum(1 for r in rows if r[2] == row and r[6] != "valid")
    print(f"  {row:<15} defaults p50 {d50:g} p99 {d99:g} CPU {dcpu:.3f}; --spin 1s p50 {s50:g} p99 {s99:g} "
          f"CPU {scpu:.3f}; difference p50 {d50 - s50:+g} p99 {d99 - s99:+g}; runs invalid: {invalid}")
PY
}
