#!/usr/bin/env bash
# Conversations through gateways: 10-turn sessions with a 2,000-token system prompt every
# session shares, sent direct to the mock (its prompt cache and prefill model on), to a second
# mock process (the twin, the resolution), through nginx and through the LiteLLM proxy, in
# alternating trials (`loadgen compare --sessions`). Reports, per turn, TTFT, the cache hit rate
# as the mock reported it, the prompt's growth, and what each gateway adds to each turn.
# Every trial's prompts are salted apart, so no run reads cache entries another warmed.
#
# Usage: scripts/bench-sessions.sh [TRIALS] [DURATION]   (default 3 trials of 10s)
#        GATEWAYS="nginx litellm" PREFILL=10us SESSION_RATE=2 THINK=100ms
# Results: bench-out/sessions/{sessions.jsonl,compare.json,compare.md}.
. "$(dirname "$0")/gateways/lib.sh"
. "$(dirname "$0")/gateways/proxies-lib.sh"
trials=${1:-3}
duration=${2:-10s}
gateways=${GATEWAYS:-nginx litellm}
prefill=${PREFILL:-10us}
rate=${SESSION_RATE:-2}
think=${THINK:-100ms}
out="$root/bench-out/sessions"
mkdir -p "$out"
install_tool nginx curl
build
start_mock --prompt-cache on --prefill-per-token "$prefill"
"$loadgen_bin" corpus --sessions 200 --turns 10 --system-tokens 2000 --prompt-tokens fixed:50 \
  --output-tokens fixed:16 --think "$think" --seed 1 --out "$out/sessions.jsonl"
master_key=sk-gatebench-7f3c9a1e5b2d4c6e8a0b1c2d3e4f5a6b
args=()
for g in $gateways; do
  case $g in
    nginx)
      start_nginx_proxy 18621
      args+=(--gateway "nginx=http://127.0.0.1:18621/v1/chat/completions" --gateway-info "nginx=$proxy_info")
      ;;
    litellm)
      venv="$root/bench-out/gateways/litellm-venv"
      if [ ! -x "$venv/bin/litellm" ]; then
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "litellm[proxy]==${LITELLM_VERSION:-1.106.12}"
      fi
      cat >"$work/litellm.yaml" <<YAML
model_list:
  - model_name: gpt-4o-mini
    litellm_params:
      model: openai/gpt-4o-mini
      api_base: http://127.0.0.1:$mock_port/v1
      api_key: sk-mock
general_settings:
  master_key: $master_key
litellm_settings:
  turn_off_message_logging: true
  disable_spend_logs: true
YAML
      taskset -c 1 "$venv/bin/litellm" --config "$work/litellm.yaml" --host 127.0.0.1 --port 18624 \
        --num_workers 1 >"$work/litellm.log" 2>&1 &
      started+=($!)
      wait_answers "http://127.0.0.1:18624/health/liveliness" 600 0.1 ||
        { echo "bench-sessions: LiteLLM did not start: $(tail -5 "$work/litellm.log")" >&2; exit 2; }
      version=$("$venv/bin/pip" show litellm | sed -n 's/^Version: //p')
      args+=(--gateway "litellm=http://127.0.0.1:18624/v1/chat/completions"
        --gateway-info "litellm=litellm[proxy] $version, 1 worker, no database, message logging off")
      ;;
    *) echo "bench-sessions: unknown gateway $g (nginx, litellm)" >&2; exit 2 ;;
  esac
done
taskset -c 0 "$loadgen_bin" compare --direct "$(direct_url)" \
  --twin "http://127.0.0.1:$twin_port/v1/chat/completions" "${args[@]}" \
  --sessions "$out/sessions.jsonl" --rate "$rate" --duration "$duration" --trials "$trials" \
  --settle 2s --scenario chat-stream --header "authorization: Bearer $master_key" \
  --out "$out/compare.json" || true
"$loadgen_bin" report "$out/compare.json" --format md >"$out/compare.md"
echo "bench-sessions: $out/compare.md"
