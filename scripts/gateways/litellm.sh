#!/usr/bin/env bash
# The LiteLLM proxy (litellm[proxy], PyPI) in front of the mock, no database, as one model
# gpt-4o-mini that clients call with OpenAI's chat API. PROVIDER says what LiteLLM calls the mock
# as: openai (its /v1, the default), anthropic (/v1/messages), azure (Azure OpenAI's deployment
# path), gemini (generateContent) or bedrock (Converse and its event stream), so the cost of
# LiteLLM's translation shows against the OpenAI pass-through.
#
# With one provider, LiteLLM runs twice, as two gateways: "litellm-off" with message logging
# turned off and "litellm-defaults" with LiteLLM's defaults (MODES), and the presets run direct
# and through each (scripts/gateways/lib.sh); names get the provider appended when it is not
# openai (litellm-off-bedrock). With several (PROVIDER="openai anthropic azure gemini bedrock"),
# one LiteLLM per provider runs with logging off, and the paired rounds call all of them in the
# same shuffled rounds, so their translation costs are compared side by side; results go to
# bench-out/gateways/litellm-providers. Installs the package into a venv at
# bench-out/gateways/litellm-venv and stops what it started.
#
# 1.106.12 is the newest release whose [proxy] extra installs from PyPI here: from 1.108 on it
# needs a `litellm-proxy` package the index does not have.
#
# Usage: scripts/gateways/litellm.sh   (PROVIDER=openai LITELLM_VERSION=1.106.12
#        METHODS="paired ladder" DURATION=… MODES="off defaults")
#        PROFILE=1 scripts/gateways/litellm.sh   (the profile method at PROFILE_RATE, default
#        20 req/s; the proxy runs on Python 3.12 or newer with its perf trampoline on,
#        PYTHONPERFSUPPORT=1 like -X perf, so the flame graphs name Python functions; the venv
#        is bench-out/gateways/litellm-venv-perf, made with PYTHON_PERF, default the first
#        python3.13 or python3.12 on PATH or under pyenv)
#        MEMORY=1 scripts/gateways/litellm.sh   (its allocations per request, counted by uprobes
#        on libc's allocator: the proxy runs with PYTHONMALLOC=malloc, so that every allocation
#        of the interpreter, small objects included, is a call to malloc the probes see; MODES
#        defaults to off, and MEMORY_LOGGING=off|on|both runs it with uvicorn's access log off
#        (a --log_config that silences uvicorn.access), then on (its default, one line per
#        request to stdout, redirected to a file); the profile method at PROFILE_RATE, default
#        10 req/s)
# PYTHONMALLOC=malloc changes the gateway: CPython's small-object allocator (pymalloc) is off and
# every object is a malloc and a free, so the MEMORY=1 figures are of that changed proxy. The
# profile's run without probes measures its latency and CPU as changed; set against a PROFILE=1
# or paired run without MEMORY=1, that is what the change costs.
# The proxy handles tens of requests a second per core, so METHODS defaults to the paired rounds
# and the ladder here; METHODS="paired constant ladder" runs the 5,000 req/s table as well.
. "$(dirname "$0")/lib.sh"
install_tool curl
version=${LITELLM_VERSION:-1.106.12}
venv="$root/bench-out/gateways/litellm-venv"
python=python3
perf_env=()
if [ "${PROFILE:-}" = 1 ]; then
  venv="$root/bench-out/gateways/litellm-venv-perf"
  python=
  for candidate in ${PYTHON_PERF:-} python3.13 python3.12 "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3; do
    if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      python=$candidate
      break
    fi
  done
  if [ -z "$python" ]; then
    echo "litellm: PROFILE=1 needs Python 3.12 or newer (perf trampoline); name it with PYTHON_PERF" >&2
    exit 2
  fi
  perf_env=(PYTHONPERFSUPPORT=1)
  PROFILE_RATE=${PROFILE_RATE:-20}
fi
# --log_config for the runs with uvicorn's access log off (MEMORY=1 only; otherwise the proxy
# keeps uvicorn's default logging, its access log into the log file in the scratch folder).
quiet_access_log=""
if [ "${MEMORY:-}" = 1 ]; then
  perf_env+=(PYTHONMALLOC=malloc)
  memory_args=(--memory-source python)
  PROFILE_RATE=${PROFILE_RATE:-10}
  MODES=${MODES:-off}
  quiet_access_log="$work/uvicorn-quiet-access.json"
  cat >"$quiet_access_log" <<'JSON'
{"version": 1, "disable_existing_loggers": false,
 "formatters": {"default": {"()": "uvicorn.logging.DefaultFormatter", "fmt": "%(levelprefix)s %(message)s"}},
 "handlers": {"default": {"formatter": "default", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"}},
 "loggers": {"uvicorn": {"handlers": ["default"], "level": "INFO", "propagate": false},
             "uvicorn.error": {"level": "INFO"},
             "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": false}}}
JSON
fi
METHODS=${METHODS:-paired ladder}
PROVIDER=${PROVIDER:-openai}
# The proxy keeps working off what it accepted after a constant-rate trial ends.
SETTLE=${SETTLE:-30s}
master_key=sk-gatebench-7f3c9a1e5b2d4c6e8a0b1c2d3e4f5a6b
build
if [ ! -x "$venv/bin/litellm" ] || ! "$venv/bin/pip" show litellm 2>/dev/null | grep -q "^Version: $version$"; then
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "litellm[proxy]==$version"
fi
start_mock
extra_args=(--header "authorization: Bearer $master_key")

# litellm_params PROVIDER: how LiteLLM reaches the mock as that provider.
litellm_params() {
  local base="http://127.0.0.1:$mock_port"
  case $1 in
    openai) printf '      model: openai/gpt-4o-mini\n      api_base: %s/v1\n      api_key: sk-mock\n' "$base" ;;
    anthropic) printf '      model: anthropic/claude-3-5-haiku-latest\n      api_base: %s\n      api_key: sk-ant-mock\n' "$base" ;;
    azure) printf '      model: azure/gpt-4o-mini-prod\n      api_base: %s\n      api_version: "2024-10-21"\n      api_key: az-mock\n' "$base" ;;
    gemini) printf '      model: gemini/gemini-2.0-flash\n      api_base: %s/v1beta\n      api_key: g-mock\n' "$base" ;;
    bedrock) printf '      model: bedrock/converse/anthropic.claude-3-haiku-20240307-v1:0\n      aws_bedrock_runtime_endpoint: %s\n      aws_access_key_id: AKIDMOCK\n      aws_secret_access_key: not-checked\n      aws_region_name: us-east-1\n' "$base" ;;
    *) echo "litellm: unknown PROVIDER $1 (openai, anthropic, azure, gemini, bedrock)" >&2; exit 2 ;;
  esac
}

# start_litellm NAME PROVIDER MODE PORT [ACCESS_LOG]: starts one proxy; sets $pid. ACCESS_LOG
# off (MEMORY=1 only) silences uvicorn's access log.
start_litellm() {
  local name=$1 provider=$2 mode=$3 port=$4 access_log=${5:-on}
  local config="$work/$name.yaml" log_args=()
  if [ "$access_log" = off ] && [ -n "$quiet_access_log" ]; then
    log_args=(--log_config "$quiet_access_log")
  fi
  {
    printf 'model_list:\n  - model_name: gpt-4o-mini\n    litellm_params:\n'
    litellm_params "$provider"
    printf 'general_settings:\n  # The proxy refuses to start without a strong master key; requests carry it.\n'
    printf '  master_key: %s\n' "$master_key"
    if [ "$mode" = off ]; then
      printf 'litellm_settings:\n  turn_off_message_logging: true\n  disable_spend_logs: true\n'
    fi
  } >"$config"
  env "${perf_env[@]}" taskset -c 1 "$venv/bin/litellm" --config "$config" --host 127.0.0.1 --port "$port" \
    --num_workers 1 "${log_args[@]}" >"$work/$name.log" 2>&1 &
  pid=$!
  started+=("$pid")
  wait_answers "http://127.0.0.1:$port/health/liveliness" 600 0.1 ||
    { echo "litellm: $name did not start (log: $(tail -5 "$work/$name.log"))" >&2; exit 2; }
}

read -r -a providers <<<"$PROVIDER"
if [ "${#providers[@]}" -eq 1 ]; then
  port=18604
  for mode in ${MODES:-off defaults}; do
    name="litellm-$mode"
    [ "$PROVIDER" = openai ] || name="$name-$PROVIDER"
    for logging in $(logging_modes yes); do
      for_logging "$logging"
      info="litellm[proxy] $version, 1 worker, no database, calls the mock as $PROVIDER"
      if [ "${MEMORY:-}" = 1 ]; then
        info="$info, PYTHONMALLOC=malloc, uvicorn access log $logging"
      fi
      start_litellm "$name" "$PROVIDER" "$mode" "$port" "$logging"
      run_methods "$name" "http://127.0.0.1:$port/v1/chat/completions" "$info" "$mode" "$pid"
      stop_gateway "$pid"
    done
  done
  exit 0
fi

if [ "${MEMORY:-}" = 1 ]; then
  echo "litellm: MEMORY=1 profiles one provider at a time (PROVIDER=openai, …)" >&2
  exit 2
fi
# Several providers: one proxy each, all in the same paired rounds.
out=${OUT:-$root/bench-out/gateways/litellm-providers}
mkdir -p "$out"
gateways=()
port=18610
for provider in "${providers[@]}"; do
  start_litellm "litellm-$provider" "$provider" off "$port"
  gateways+=(--gateway "litellm-$provider=http://127.0.0.1:$port/v1/chat/completions"
    --gateway-info "litellm-$provider=litellm[proxy] $version, 1 worker, no database, calls the mock as $provider"
    --gateway-recording "litellm-$provider=off" --sample-pid "litellm-$provider=$pid")
  port=$((port + 1))
done
echo "== litellm providers: paired" >&2
"$loadgen_bin" overhead --preset "$root/presets/paired-latency.toml" \
  --direct "$(direct_url)" "${gateways[@]}" "${extra_args[@]}" \
  --twin "http://127.0.0.1:$twin_port/v1/chat/completions" \
  --cores 0 --quiet --out "$out/paired.json" || true
"$loadgen_bin" report "$out/paired.json" --format md --out "$out/paired.md"
"$loadgen_bin" report "$out/paired.json" --format html --out "$out/paired.html"
echo "results and reports in $out" >&2
