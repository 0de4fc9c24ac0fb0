#!/usr/bin/env bash
# The LiteLLM proxy (litellm[proxy], PyPI) in front of the mock: a model gpt-4o-mini pointing at
# the mock's /v1, no database. Run twice, as two gateways: "litellm-off" with message logging
# turned off, and "litellm-defaults" with LiteLLM's defaults. Installs the package into a venv at
# bench-out/gateways/litellm-venv, runs the profiles (scripts/gateways/lib.sh) direct and through
# each, writes results and reports to bench-out/gateways/litellm-off and litellm-defaults, and
# stops what it started.
#
# 1.106.12 is the newest release whose [proxy] extra installs from PyPI here: from 1.108 on it
# needs a `litellm-proxy` package the index does not have.
#
# Usage: scripts/gateways/litellm.sh   (LITELLM_VERSION=1.106.12 METHODS="paired ladder" DURATION=…
#        MODES="off defaults")
# The proxy handles tens of requests a second per core, so METHODS defaults to the paired rounds
# and the ladder here; METHODS="paired constant ladder" runs the 5,000 req/s table as well.
. "$(dirname "$0")/lib.sh"
need curl curl
version=${LITELLM_VERSION:-1.106.12}
venv="$root/bench-out/gateways/litellm-venv"
METHODS=${METHODS:-paired ladder}
# The proxy keeps working off what it accepted after a constant-rate trial ends.
SETTLE=${SETTLE:-30s}
build
if [ ! -x "$venv/bin/litellm" ] || ! "$venv/bin/pip" show litellm 2>/dev/null | grep -q "^Version: $version$"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "litellm[proxy]==$version"
fi
start_mock
port=18604
extra_args=(--header "authorization: Bearer sk-gatebench-7f3c9a1e5b2d4c6e8a0b1c2d3e4f5a6b")
for mode in ${MODES:-off defaults}; do
  config="$work/litellm-$mode.yaml"
  cat >"$config" <<YAML
model_list:
  - model_name: gpt-4o-mini
    litellm_params:
      model: openai/gpt-4o-mini
      api_base: http://127.0.0.1:$mock_port/v1
      api_key: sk-mock
general_settings:
  # The proxy refuses to start without a strong master key; requests carry it.
  master_key: sk-gatebench-7f3c9a1e5b2d4c6e8a0b1c2d3e4f5a6b
YAML
  if [ "$mode" = off ]; then
    cat >>"$config" <<YAML
litellm_settings:
  turn_off_message_logging: true
  disable_spend_logs: true
YAML
  fi
  taskset -c 1 "$venv/bin/litellm" --config "$config" --host 127.0.0.1 --port "$port" \
    --num_workers 1 >"$work/litellm-$mode.log" 2>&1 &
  pid=$!
  started+=("$pid")
  for _ in $(seq 600); do
    curl -s -o /dev/null "http://127.0.0.1:$port/health/liveliness" && break
    sleep 0.1
  done
  curl -s -o /dev/null "http://127.0.0.1:$port/health/liveliness" ||
    { echo "litellm: did not start (log: $(tail -5 "$work/litellm-$mode.log"))" >&2; exit 2; }
  run_methods "litellm-$mode" "http://127.0.0.1:$port/v1/chat/completions" \
    "litellm[proxy] $version, 1 worker, no database" "$mode" "$pid"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
done
