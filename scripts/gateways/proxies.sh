#!/usr/bin/env bash
# nginx and HAProxy side by side in one `loadgen overhead` run (presets/paired-latency.toml,
# a second mock process as the twin): each against direct, and the two against each other.
# RUNS runs back to back (default 3), results and reports in bench-out/gateways/proxies.
# MODE=compare runs `loadgen compare` instead (presets/constant-5000rps.toml, DURATION per
# trial, default 20s, the same twin): per-percentile added latency under a constant rate.
#
# Usage: [MODE=compare] [DURATION=20s] scripts/gateways/proxies.sh [RUNS]
#   (LOADGEN_ARGS: more loadgen flags)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/proxies-lib.sh"
install_tool nginx haproxy curl
runs=${1:-3}
out=${OUT:-$root/bench-out/gateways/proxies}
mkdir -p "$out"
build
start_mock
start_nginx_proxy 18601
nginx_pid=$proxy_pid nginx_info=$proxy_info
start_haproxy 18602
haproxy_pid=$proxy_pid haproxy_info=$proxy_info
# What both methods send: direct, the twin, both proxies, their processes sampled.
targets=(--direct "$(direct_url)" --twin "http://127.0.0.1:$twin_port/v1/chat/completions"
  --gateway "nginx=http://127.0.0.1:18601/v1/chat/completions" --gateway-info "nginx=$nginx_info"
  --gateway "haproxy=http://127.0.0.1:18602/v1/chat/completions" --gateway-info "haproxy=$haproxy_info"
  --sample-pid "nginx=$nginx_pid" --sample-pid "haproxy=$haproxy_pid")
for run in $(seq "$runs"); do
  if [[ ${MODE:-overhead} == compare ]]; then
    result=$out/compare-$run
    "$loadgen_bin" compare --preset "$root/presets/constant-5000rps.toml" "${targets[@]}" \
      --duration "${DURATION:-20s}" --cores 0 --quiet ${LOADGEN_ARGS:-} --out "$result.json" || true
    tables='/^| target | trials/,/^$/p;/^| gateway | percentile/,/^$/p'
  else
    result=$out/run-$run
    "$loadgen_bin" overhead --preset "$root/presets/paired-latency.toml" "${targets[@]}" \
      --gateway-recording nginx=off --gateway-recording haproxy=off \
      --seed "$run" --cores 0 --quiet ${LOADGEN_ARGS:-} --out "$result.json" || true
    tables='/^| gateway | scenario/,/^$/p;/^| gateways/,/^$/p'
  fi
  "$loadgen_bin" report "$result.json" --format md --out "$result.md"
  echo "== ${MODE:-overhead} run $run" >&2
  sed -n "$tables" "$result.md"
done
echo "results and reports in $out" >&2
