#!/usr/bin/env bash
# HAProxy as a pass-through proxy in front of the mock: a second zero-logic baseline. Installs
# haproxy from apt if missing, runs the profiles (scripts/gateways/lib.sh) direct and through
# it, writes results and reports to bench-out/gateways/haproxy, and stops what it started.
#
# Usage: scripts/gateways/haproxy.sh      (DURATION=20s METHODS="paired ladder" to shorten)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/proxies-lib.sh"
install_tool haproxy curl
port=18602
build
start_mock
start_haproxy "$port"
run_methods haproxy "http://127.0.0.1:$port/v1/chat/completions" "$proxy_info" off "$proxy_pid"
