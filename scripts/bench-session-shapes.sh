#!/usr/bin/env bash
# Sessions in every API's shape, and sessions with branches, direct to the mock (its prompt
# cache and prefill model on): per route, the cache hit rate and TTFT p50 of turns 1, 2, 5 and
# 10 of 10-turn sessions with a 2,000-token system prompt; for Anthropic's route, each
# placement of its cache breakpoints (--cache-marks); then the same sessions on chat with two
# 3-turn branches each, the branches' own rows and the turns that join them.
#
# Usage: scripts/bench-session-shapes.sh [DURATION]   (default 10s)
#        PREFILL=10us SESSION_RATE=2 THINK=100ms
# Results: bench-out/session-shapes/{*.json,shapes.md}.
. "$(dirname "$0")/gateways/lib.sh"
duration=${1:-10s}
prefill=${PREFILL:-10us}
rate=${SESSION_RATE:-2}
think=${THINK:-100ms}
out="$root/bench-out/session-shapes"
mkdir -p "$out"
build
start_mock --prompt-cache on --prefill-per-token "$prefill"
base="http://127.0.0.1:$mock_port"
common=(corpus --sessions 200 --turns 10 --system-tokens 2000 --prompt-tokens fixed:50
  --output-tokens fixed:16 --think "$think" --seed 1)
"$loadgen_bin" "${common[@]}" --out "$out/sessions.jsonl"
"$loadgen_bin" "${common[@]}" --branches 2 --branch-turns 3 --out "$out/branched.jsonl"

# run NAME ROUTE FILE [loadgen flags...]: one run of the sessions, its result in NAME.json.
run() {
  local name=$1 route=$2 file=$3
  shift 3
  taskset -c 0 "$loadgen_bin" run --target "$base$route" --sessions "$file" --rate "$rate" \
    --duration "$duration" --scenario chat-stream --model "${MODEL:-gpt-4o-mini}" "$@" \
    --out "$out/$name.json" >/dev/null || true
}

anthropic=(--header "anthropic-version: 2023-06-01")
MODEL=gpt-4o-mini run chat /v1/chat/completions "$out/sessions.jsonl"
MODEL=gpt-4o-mini run responses /v1/responses "$out/sessions.jsonl"
for marks in history system none; do
  MODEL=claude-sonnet-4-5 run "messages-$marks" /v1/messages "$out/sessions.jsonl" \
    "${anthropic[@]}" --cache-marks "$marks"
done
MODEL=gemini-2.0-flash run gemini "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse" \
  "$out/sessions.jsonl"
MODEL=claude run bedrock "/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse-stream" \
  "$out/sessions.jsonl" --cache-marks history
MODEL=gpt-4o-mini run branches /v1/chat/completions "$out/branched.jsonl"

python3 - "$out" >"$out/shapes.md" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)["runs"][0]
def ms(summary):
    return "-" if not summary else f"{summary['p50'] / 1000:.2f} ms"
def pct(v):
    return "not reported" if v is None else f"{v * 100:.0f}%"
print("| route | marks | sessions | " + " | ".join(f"turn {t} hit / TTFT p50" for t in (1, 2, 5, 10)) + " |")
print("|---|---|---:|" + "---|" * 4)
names = ["chat", "responses", "messages-history", "messages-system", "messages-none", "gemini", "bedrock"]
for name in names:
    run = load(name)
    if run is None or run.get("sessions") is None:
        continue
    s = run["sessions"]
    rows = {r["turn"]: r for r in s["turns"]}
    marks = name.split("-")[1] if "-" in name else "-"
    cells = []
    for t in (1, 2, 5, 10):
        r = rows.get(t)
        cells.append("-" if r is None else f"{pct(r['hit_rate'])} / {ms(r.get('ttft'))}")
    print(f"| {name.split('-')[0]} | {marks} | {s['completed']}/{s['started']} | " + " | ".join(cells) + " |")
run = load("branches")
if run and run.get("sessions"):
    s = run["sessions"]
    print()
    print(f"Branches: {s['started']} sessions, {s['completed']} completed, {s.get('branches', 0)} branches started;"
          f" session duration p50 {s['duration']['p50'] / 1e3:.0f} ms")
    print()
    print("| branch turn | requests | hit rate | TTFT p50 |")
    print("|---:|---:|---:|---:|")
    for r in s.get("branch_turns", []):
        print(f"| {r['turn']} | {r['requests']} | {pct(r['hit_rate'])} | {ms(r.get('ttft'))} |")
PY
cat "$out/shapes.md"
