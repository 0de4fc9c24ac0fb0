# Shared by the gateway scripts: build, start the mock, run the presets direct and through a
# gateway, write results and reports, and stop everything started.
#
# Layout on a 2-core machine: the mock and the gateway on CPU 1, loadgen on CPU 0. Settings by
# environment: OUT (results folder, default bench-out/gateways/NAME), DURATION (per trial of the
# constant-rate table, default the preset's 60s), SETTLE (pause before each constant-rate trial
# after the first, for a gateway that is still working off its backlog; default none),
# METHODS (default "paired constant ladder"; "profile" samples the gateway with perf under
# presets/gateway-profile.toml: flame graphs beside its latency), PROFILE=1 (start the gateway
# so perf can name its JIT-compiled or interpreted frames, Node with --perf-basic-prof and
# Python with -X perf, and run only the profile method unless METHODS says otherwise),
# PROFILE_RATE (the profile method's rate, default the preset's 200 req/s), CALL_GRAPH (its
# stack walking: fp or dwarf, default the preset's fp), PROFILE_FLAGS (more options for
# `loadgen profile`, like "--off-cpu off --frequency 99"; with MEMORY=1, "--rest 5s" or
# "--price 0.166/h,4cpu,16GiB"), MEMORY=1 (the profile method counts the gateway's allocations
# instead of sampling its CPU: `loadgen profile --memory` with the source the gateway script
# names in memory_args, the gateway started so that source works; the profile method only
# unless METHODS says otherwise; writes profile-memory.json, and profile-memory-logging.json for
# the run with logging on), MEMORY_LOGGING (off, on or both, default both where the gateway has
# an access-log setting: the gateway started with its access log off, then restarted with it on,
# writing to a file in the scratch folder, so the two results can be diffed with `loadgen
# profile --diff`; a gateway without such a setting runs with it off only, and says so).

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
# How `loadgen profile --memory` reads the gateway's allocations (--memory-source, --memory-url,
# --pprof-url): set by the function that starts the gateway.
memory_args=()
# Appended to every result's file name: "-logging" for the run with the access log on.
result_suffix=""
if [ "${PROFILE:-}" = 1 ] || [ "${MEMORY:-}" = 1 ]; then
  METHODS=${METHODS:-profile}
fi
case ${MEMORY_LOGGING:-both} in
  off | on | both) ;;
  *) echo "gateways: MEMORY_LOGGING is off, on or both, not $MEMORY_LOGGING" >&2; exit 2 ;;
esac

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
# presets ask 5 and 16): the ladder's 60-token streams then do not depend on the gateway
# forwarding the preset's x-mock-tokens header (LiteLLM does not).
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

# logging_modes yes|no: the access-log settings to run the gateway with, in order, given whether
# it has such a setting: off alone unless MEMORY=1; with it, MEMORY_LOGGING's (both: off, then
# on).
logging_modes() {
  if [ "${MEMORY:-}" != 1 ]; then
    echo off
  elif [ "$1" != yes ]; then
    if [ "${MEMORY_LOGGING:-off}" != off ]; then
      echo "gateways: this gateway has no access-log setting: logging off only" >&2
    fi
    echo off
  elif [ "${MEMORY_LOGGING:-both}" = both ]; then
    echo off on
  else
    echo "$MEMORY_LOGGING"
  fi
}

# for_logging MODE: sets result_suffix and recording (the level declared for the gateway: an
# access log line per request is "defaults", no log "off") for the access-log setting MODE.
for_logging() {
  if [ "$1" = on ]; then
    result_suffix=-logging
    recording=defaults
  else
    result_suffix=""
    recording=off
  fi
}

# stop_gateway PID: stops a gateway before it is started again with other settings.
stop_gateway() {
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# run_methods NAME URL INFO RECORDING PID: the presets direct and through the gateway at URL;
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
        "$loadgen_bin" overhead --preset "$root/presets/paired-latency.toml" "${common[@]}" \
          --twin "http://127.0.0.1:$twin_port/v1/chat/completions" \
          --cores 0 --quiet --out "$out/paired$result_suffix.json" || true ;;
      constant)
        "$loadgen_bin" compare --preset "$root/presets/constant-5000rps.toml" "${common[@]}" \
          --twin "http://127.0.0.1:$twin_port/v1/chat/completions" \
          ${DURATION:+--duration "$DURATION"} ${SETTLE:+--settle "$SETTLE"} --cores 0 --quiet --out "$out/constant$result_suffix.json" || true ;;
      profile)
        local memory=() file=profile
        if [ "${MEMORY:-}" = 1 ]; then
          memory=(--memory "${memory_args[@]}")
          file=profile-memory
        fi
        # shellcheck disable=SC2086 # PROFILE_FLAGS is split into options on purpose
        "$loadgen_bin" profile --preset "$root/presets/gateway-profile.toml" "${common[@]}" \
          --twin "http://127.0.0.1:$twin_port/v1/chat/completions" --pid "$pid" \
          ${PROFILE_RATE:+--rate "$PROFILE_RATE"} ${CALL_GRAPH:+--call-graph "$CALL_GRAPH"} \
          "${memory[@]}" ${PROFILE_FLAGS:-} \
          --cores 0 --quiet --out "$out/$file$result_suffix.json" || true ;;
      ladder)
        "$loadgen_bin" ladder --preset "$root/presets/streams-ladder.toml" "${common[@]}" \
          --cores 0 --quiet --out "$out/ladder$result_suffix.json" || true ;;
      *) echo "gateways: unknown method $method" >&2; exit 2 ;;
    esac
  done
  for result in "$out"/*.json; do
    "$loadgen_bin" report "$result" --format md --out "${result%.json}.md"
    "$loadgen_bin" report "$result" --format html --out "${result%.json}.html"
  done
  echo "results and reports in $out" >&2
}
