# Shared by the gateway scripts: build, start the mock, run the profiles direct and through a
# gateway, write results and reports, and stop everything started.
#
# Layout on a 2-core machine: the mock and the gateway on CPU 1, loadgen on CPU 0. Settings by
# environment: OUT (results folder, default bench-out/gateways/NAME), DURATION (per trial of the
# constant-rate table, default the profile's 60s), SETTLE (pause before each constant-rate trial
# after the first, for a gateway that is still working off its backlog; default none),
# METHODS (default "paired constant ladder"; "profile" samples the gateway with perf under
# profiles/gateway-profile.toml: flame graphs beside its latency), PROFILE=1 (start the gateway
# so perf can name its JIT-compiled or interpreted frames, Node with --perf-basic-prof and
# Python with -X perf, and run only the profile method unless METHODS says otherwise),
# PROFILE_RATE (the profile method's rate, default the profile's 200 req/s), CALL_GRAPH (its
# stack walking: fp or dwarf, default the profile's fp), PROFILE_FLAGS (more options for
# `loadgen profile`, like "--off-cpu off --frequency 99").

set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mock_bin="$root/target/release/mock-upstream"
loadgen_bin="$root/target/release/loadgen"
mock_port=${MOCK_PORT:-18600}
# A second mock process with the same flags: the paired method's twin (its A/A control).
twin_port=${TWIN_PORT:-18609}
work=$(mktemp -d)
started=()
# Options every loadgen command of a gateway script gets (headers a gateway needs, …).
extra_args=()
if [ "${PROFILE:-}" = 1 ]; then
  METHODS=${METHODS:-profile}
fi

cleanup() {
  for pid in "${started[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for pid in "${started[@]:-}"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# From scripts/lib: build_release (build.sh), install_tool TOOL... (tools.sh: each missing tool
# installed, nginx, haproxy, curl, node and npm from the Debian archive), wait_answers
# (ports.sh).
# shellcheck source=SCRIPTDIR/../lib/build.sh
. "$root/scripts/lib/build.sh"
# shellcheck source=SCRIPTDIR/../lib/tools.sh
. "$root/scripts/lib/tools.sh"
# shellcheck source=SCRIPTDIR/../lib/ports.sh
. "$root/scripts/lib/ports.sh"

wait_port() { # PORT [PATH]: exits 2 unless it answers within 10 s
  wait_answers "http://127.0.0.1:$1${2:-/}" 200 && return 0
  echo "gateways: nothing answers on port $1" >&2
  exit 2
}

build() {
  build_release -p mock-upstream -p loadgen
}

# The mock answers 60 tokens unless a request's max_tokens asks fewer (the paired and constant
# profiles ask 5 and 16): the ladder's 60-token streams then do not depend on the gateway
# forwarding the profile's x-mock-tokens header (LiteLLM does not).
start_mock() { # extra MOCK flags...
  taskset -c 1 "$mock_bin" --listen "127.0.0.1:$mock_port" --threads 1 --tokens 60 "$@" \
    2>"$work/mock.log" &
  started+=($!)
  taskset -c 1 "$mock_bin" --listen "127.0.0.1:$twin_port" --threads 1 --tokens 60 "$@" \
    2>"$work/twin.log" &
  started+=($!)
  wait_port "$mock_port" /health
  wait_port "$twin_port" /health
}

direct_url() { echo "http://127.0.0.1:$mock_port/v1/chat/completions"; }

# run_methods NAME URL INFO RECORDING PID: the profiles direct and through the gateway at URL;
# RECORDING is what it records per call: off, defaults or full.
run_methods() {
  local name=$1 url=$2 info=$3 recording=$4 pid=$5
  local out=${OUT:-$root/bench-out/gateways/$name}
  mkdir -p "$out"
  local common=(--direct "$(direct_url)" --gateway "$name=$url" --gateway-info "$name=$info"
    --gateway-recording "$name=$recording" --sample-pid "$name=$pid" "${extra_args[@]}")
  for method in ${METHODS:-paired constant ladder}; do
    echo "== $name: $method" >&2
    case $method in
      paired)
        "$loadgen_bin" overhead --profile "$root/profiles/paired-latency.toml" "${common[@]}" \
          --twin "http://127.0.0.1:$twin_port/v1/chat/completions" \
          --pin 0 --quiet --out "$out/paired.json" || true ;;
      constant)
        "$loadgen_bin" compare --profile "$root/profiles/constant-5000rps.toml" "${common[@]}" \
          --twin "http://127.0.0.1:$twin_port/v1/chat/completions" \
          ${DURATION:+--duration "$DURATION"} ${SETTLE:+--settle "$SETTLE"} --pin 0 --quiet --out "$out/constant.json" || true ;;
      profile)
        "$loadgen_bin" profile --profile "$root/profiles/gateway-profile.toml" "${common[@]}" \
          --twin "http://127.0.0.1:$twin_port/v1/chat/completions" --pid "$pid" \
          ${PROFILE_RATE:+--rate "$PROFILE_RATE"} ${CALL_GRAPH:+--call-graph "$CALL_GRAPH"} \
          ${PROFILE_FLAGS:-} \
          --pin 0 --quiet --out "$out/profile.json" || true ;;
      ladder)
        "$loadgen_bin" ladder --profile "$root/profiles/streams-ladder.toml" "${common[@]}" \
          --pin 0 --quiet --out "$out/ladder.json" || true ;;
      *) echo "gateways: unknown method $method" >&2; exit 2 ;;
    esac
  done
  for result in "$out"/*.json; do
    "$loadgen_bin" report "$result" --format md --out "${result%.json}.md"
    "$loadgen_bin" report "$result" --format html --out "${result%.json}.html"
  done
  echo "results and reports in $out" >&2
}
