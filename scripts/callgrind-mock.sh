#!/usr/bin/env bash
# Instructions the mock spends per request, counted by callgrind (deterministic: the same binary,
# request and count give the same figure on a busy or an idle machine). The mock runs one worker
# under callgrind twice, serving N and 2N requests from `oha -c 1`; the difference over N is the
# cost of one request with start-up and shutdown cancelled. Prints that figure and the functions
# that spend the most on the second run (inclusive and self).
#
# Usage: scripts/callgrind-mock.sh [chat|stream|messages|messages-stream|azure|azure-stream|
#          gemini|gemini-stream|bedrock|bedrock-stream] [N] [mock flags...]
#   default: chat, N = 1000. MOCK=PATH counts that binary (say, an older commit's build)
#   instead of this checkout's release build. HELLO=1 counts the floor instead: the repository's
#   bare hyper server (examples/hyper_hello.rs) returning the very bytes the mock answers to the
#   same request, which it neither parses nor reads. CONNECTIONS=C sends from C connections
#   (default 1; at 64, every connection's state and buffers no longer stay in the first-level
#   caches). CACHE=1 adds callgrind's cache model (--cache-sim=yes: first-level caches as this
#   machine reports them, no prefetch, the kernel's code not counted) and prints its misses per
#   request beside the instructions: I1 (instruction fetches), D1 reads and D1 writes.
#   VARY=1 makes every request's head differ, as loadgen's do (each carries its sequence
#   number): a random 12-digit query on the path (oha --rand-regex-url), which the mock ignores.
#   The mock then reads every head in full; its kept reading of the last one backs off.
# Needs: valgrind (apt-get install valgrind), oha (cargo install oha --locked), curl.
set -euo pipefail

kind=${1:-chat}
n=${2:-1000}
shift $(($# < 2 ? $# : 2))
root=$(cd "$(dirname "$0")/.." && pwd)
port=18451
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [[ -n ${KEEP:-} ]] && { cp "$work"/two.out "$KEEP"; cp "$work"/one.out "$KEEP.one"; }; rm -rf "$work"' EXIT

. "$root/scripts/lib/tools.sh"
require_tool callgrind-mock valgrind callgrind_annotate oha curl
. "$root/scripts/lib/build.sh"
if [[ -z ${MOCK:-} ]]; then
  build_release -p mock-upstream --bin mock-upstream
fi
[[ -n ${HELLO:-} ]] && build_release -p mock-upstream --example hyper_hello
mock=${MOCK:-$root/target/release/mock-upstream}
. "$root/scripts/lib/ports.sh"
require_free_ports callgrind-mock "$port"

mock_flags=("$@")
path=/v1/chat/completions
header=()
case $kind in
  chat) body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}' ;;
  stream) body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16,"stream":true}' ;;
  messages | messages-stream)
    path=/v1/messages
    header=(-H "anthropic-version: 2023-06-01")
    stream=false
    [[ $kind == messages-stream ]] && stream=true
    body='{"model":"claude-sonnet-4-5","max_tokens":16,"stream":'$stream',"messages":[{"role":"user","content":"Say hello."}]}'
    ;;
  azure | azure-stream)
    path='/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21'
    stream=false
    [[ $kind == azure-stream ]] && stream=true
    body='{"messages":[{"role":"user","content":"Say hello."}],"max_tokens":16,"stream":'$stream'}'
    ;;
  gemini | gemini-stream)
    path=/v1beta/models/gemini-2.0-flash:generateContent
    [[ $kind == gemini-stream ]] && path='/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse'
    body='{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}],"generationConfig":{"maxOutputTokens":16}}'
    ;;
  bedrock | bedrock-stream)
    path=/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse
    [[ $kind == bedrock-stream ]] && path=${path}-stream
    body='{"messages":[{"role":"user","content":[{"text":"Say hello."}]}],"inferenceConfig":{"maxTokens":16}}'
    ;;
  *) echo "callgrind-mock: unknown kind $kind (chat, stream, messages, messages-stream, azure, azure-stream, gemini, gemini-stream, bedrock, bedrock-stream)" >&2; exit 2 ;;
esac

stop=INT
server=("$mock" --listen "127.0.0.1:$port" --threads 1 "${mock_flags[@]}")
if [[ -n ${HELLO:-} ]]; then
  # The mock's answer body to this request, taken once from the mock itself.
  "${server[@]}" 2>"$work/mock.log" &
  mock_pid=$!
  wait_answers "http://127.0.0.1:$port/health" || { echo "callgrind-mock: the mock did not start" >&2; exit 2; }
  curl -sf -X POST -H 'content-type: application/json' "${header[@]}" -d "$body" \
    "http://127.0.0.1:$port$path" -o "$work/answer"
  kill "$mock_pid"
  wait "$mock_pid" 2>/dev/null || true
  server=("$root/target/release/examples/hyper_hello" "127.0.0.1:$port" "$work/answer")
  # A background job of a script ignores SIGINT, and hyper_hello sets no handler of its own.
  stop=TERM
  kind="$kind (hyper_hello, the mock's $(wc -c <"$work/answer")-byte answer)"
fi

connections=${CONNECTIONS:-1}
url="http://127.0.0.1:$port$path"
vary=()
if [[ -n ${VARY:-} ]]; then
  # A regex: the path's own `?` (Azure's) escaped, the random part after it.
  query='\?v=[0-9]{12}'
  [[ $path == *\?* ]] && query='&v=[0-9]{12}'
  url="http://127.0.0.1:$port${path//\?/\\?}$query"
  vary=(--rand-regex-url)
  kind="$kind, every head different"
fi
cache=()
[[ -n ${CACHE:-} ]] && cache=(--cache-sim=yes)
# Runs the server under callgrind for `count` requests; prints the total instructions.
run() { # count out
  valgrind --tool=callgrind "${cache[@]}" --callgrind-out-file="$2" "${server[@]}" \
    2>"$work/valgrind.log" &
  local pid=$!
  # valgrind starts slowly: up to 20 s.
  wait_answers "http://127.0.0.1:$port/" 400 || { echo "callgrind-mock: the mock did not start" >&2; cat "$work/valgrind.log" >&2; exit 2; }
  oha -n "$1" -c "$connections" --no-tui -m POST -T application/json "${header[@]}" -d "$body" \
    "${vary[@]}" "$url" >"$work/oha.txt"
  grep -q "\[200\] $1 responses" "$work/oha.txt" || { echo "callgrind-mock: not every request got 200" >&2; cat "$work/oha.txt" >&2; exit 2; }
  kill "-$stop" "$pid"
  wait "$pid" 2>/dev/null || true
  callgrind_annotate "$2" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }'
}
one=$(run "$n" "$work/one.out")
two=$(run "$((2 * n))" "$work/two.out")
echo "callgrind-mock: $kind, $n and $((2 * n)) requests from $connections connection(s): $one and $two instructions"
echo "instructions per request: $(((two - one) / n))"
if [[ -n ${CACHE:-} ]]; then
  # The totals line holds every event: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw.
  totals() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done { gsub(",", ""); print; done = 1 }'; }
  python3 - "$n" "$(totals "$work/one.out")" "$(totals "$work/two.out")" <<'PY'
import sys
n = int(sys.argv[1])
# "263200683 (100.0%) 70006257 (100.0%) ... PROGRAM TOTALS": the counts, in order.
one, two = ([int(x) for x in a.split() if x.isdigit()][:9] for a in sys.argv[2:4])
per = [(b - a) / n for a, b in zip(one, two)]
print(f"cache misses per request (callgrind's model): I1 {per[3]:.0f}, D1 read {per[4]:.0f}, "
      f"D1 write {per[5]:.0f}; last level {max(0.0, per[6] + per[7] + per[8]):.0f}")
PY
fi
echo
echo "## Most instructions per request, self (the two runs' difference over $n)"
# Start-up and shutdown cancel in the difference, so what is left is what a request costs.
python3 - "$n" <(callgrind_annotate --auto=no --threshold=100 "$work/one.out" 2>/dev/null) \
  <(callgrind_annotate --auto=no --threshold=100 "$work/two.out" 2>/dev/null) <<'PY'
import re, sys
def costs(path):
    out = {}
    for line in open(path):
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(.*)", line)
        if m and "PROGRAM TOTALS" not in line and not m.group(2).startswith("=>"):
            name = re.sub(r" \[.*\]$", "", m.group(2))
            out[name] = out.get(name, 0) + int(m.group(1).replace(",", ""))
    return out
n = int(sys.argv[1])
one, two = costs(sys.argv[2]), costs(sys.argv[3])
rows = sorted(((two.get(k, 0) - one.get(k, 0)) / n, k) for k in set(one) | set(two))
for per, name in reversed(rows[-30:]):
    print(f"{per:9.1f}  {name[:150]}")
PY
echo
echo "## Most instructions, inclusive ($((2 * n)) requests)"
callgrind_annotate --inclusive=yes "$work/two.out" 2>/dev/null | sed -n '/^Ir/,$p' | head -40 || true
echo
echo "## Most instructions, self"
callgrind_annotate "$work/two.out" 2>/dev/null | sed -n '/^Ir/,$p' | head -30 || true
