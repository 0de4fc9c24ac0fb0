#!/usr/bin/env bash
# nginx as a pass-through proxy in front of the mock: the zero-logic baseline. Installs nginx
# from apt if missing, runs the presets (scripts/gateways/lib.sh) direct and through it, writes
# results and reports to bench-out/gateways/nginx, and stops what it started.
#
# Usage: scripts/gateways/nginx.sh        (DURATION=20s METHODS="paired ladder" to shorten)
#        MEMORY=1 scripts/gateways/nginx.sh   (its calls to the C allocator per request, counted
#        by uprobes on libc; nginx serves most of a request from its own pools, so this is the
#        count of what the pools did not serve; MEMORY_LOGGING=off|on|both: access_log off, then
#        to a file)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/proxies-lib.sh"
install_tool nginx curl
port=18601
build
start_mock
for logging in $(logging_modes yes); do
  for_logging "$logging"
  start_nginx_proxy "$port" "$logging"
  run_methods nginx "http://127.0.0.1:$port/v1/chat/completions" "$proxy_info" "$recording" "$proxy_pid"
  stop_gateway "$proxy_pid"
done
