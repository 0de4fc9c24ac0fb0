#!/usr/bin/env bash
# HAProxy as a pass-through proxy in front of the mock: a second zero-logic baseline. Installs
# haproxy from apt if missing, runs the presets (scripts/gateways/lib.sh) direct and through
# it, writes results and reports to bench-out/gateways/haproxy, and stops what it started.
#
# Usage: scripts/gateways/haproxy.sh      (DURATION=20s METHODS="paired ladder" to shorten)
#        MEMORY=1 scripts/gateways/haproxy.sh (its calls to the C allocator per request, counted
#        by uprobes on libc; HAProxy serves most of a request from its own pools, so this is the
#        count of what the pools did not serve; MEMORY_LOGGING=off|on|both: no log, then
#        option httplog to stdout, redirected to a file)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/proxies-lib.sh"
install_tool haproxy curl
port=18602
build
start_mock
for logging in $(logging_modes yes); do
  for_logging "$logging"
  start_haproxy "$port" "$logging"
  run_methods haproxy "http://127.0.0.1:$port/v1/chat/completions" "$proxy_info" "$recording" "$proxy_pid"
  stop_gateway "$proxy_pid"
done
