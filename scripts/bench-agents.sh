#!/usr/bin/env bash
# Agent loops straight to the mock: 50 sessions of 4 turns, 2 tools and up to 2 tool rounds a
# turn, a 1,000-token system prompt, 5 sessions a second, every answer calling tools
# (`--tool-calls 100%`). Whole and streamed answers, with no think time (every turn and round
# due at once) and with `--think 100ms`, interleaved for ROUNDS rounds. Prints each run's
# validity, schedule lag and build time, the tool rounds' TTFT p50 (response time p50 when
# whole) and the p50 share of a session's time in its tool rounds, then each case's medians.
#
# Usage: scripts/bench-agents.sh [ROUNDS]   (default 3)
# Results: bench-out/agents/{sessions.jsonl,<case>-<round>.json}.
. "$(dirname "$0")/gateways/lib.sh"
rounds=${1:-3}
out="$root/bench-out/agents"
mkdir -p "$out"
build
start_mock --tool-calls 100%
"$loadgen_bin" corpus --sessions 50 --turns 4 --tools 2 --tool-rounds 2 --system-tokens 1000 \
  --seed 1 --out "$out/sessions.jsonl" >/dev/null
url="http://127.0.0.1:$mock_port/v1/chat/completions"
cases=("chat none" "chat 100ms" "chat-stream none" "chat-stream 100ms")
for round in $(seq 1 "$rounds"); do
  for c in "${cases[@]}"; do
    read -r scenario think <<<"$c"
    think_flag=()
    [ "$think" = none ] || think_flag=(--think "$think")
    file="$out/$scenario-$think-$round.json"
    taskset -c 0 "$loadgen_bin" run --target "$url" --sessions "$out/sessions.jsonl" \
      --scenario "$scenario" --rate 5 --duration 10s "${think_flag[@]}" --out "$file" \
      >/dev/null 2>"$work/run.log" || true
    [ -s "$file" ] || { echo "bench-agents: no result for $c: $(tail -3 "$work/run.log")" >&2; exit 2; }
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
cases = ["chat-none", "chat-100ms", "chat-stream-none", "chat-stream-100ms"]
print(f"{'case':<20} {'round':>5} {'valid':>6} {'requests':>9} {'lag p50':>8} {'lag p99':>8} "
      f"{'build p50':>10} {'build p99':>10} {'tool p50':>9} {'in tools':>9}  reasons")
med = {}
for case in cases:
    rows = []
    for r in range(1, rounds + 1):
        run = json.load(open(f"{out}/{case}-{r}.json"))["runs"][0]
        m = run["metrics"]
        lag, build = m["schedule_lag"], m.get("build_time", {})
        s = run["sessions"]
        tool = s["tool"]["ttft"] or s["tool"]["response_time"]
        row = (lag["p50"], lag["p99"], build.get("p50", 0), build.get("p99", 0),
               tool["p50"], s["tool_share"]["p50"] / 10)
        rows.append(row)
        reasons = "; ".join(run["validity"]["reasons"])[:100]
        print(f"{case:<20} {r:>5} {str(run['validity']['valid']):>6} {run['requests']:>9} "
              f"{row[0]:>8} {row[1]:>8} {row[2]:>10} {row[3]:>10} {row[4]:>9} {row[5]:>8.1f}%  {reasons}")
    med[case] = [statistics.median(col) for col in zip(*rows)]
print("\nmedians (us): lag p50 / p99, build_time p50 / p99, tool rounds' p50, a session's time in them p50")
for case in cases:
    a = med[case]
    print(f"  {case:<20} {a[0]:>6.0f} / {a[1]:>6.0f}   {a[2]:>6.0f} / {a[3]:>6.0f}   {a[4]:>7.0f}   {a[5]:>5.1f}%")
PY
