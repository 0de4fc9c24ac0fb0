#!/usr/bin/env bash
# nginx as a pass-through proxy in front of the mock: the zero-logic baseline. Installs nginx
# from apt if missing, runs the profiles (scripts/gateways/lib.sh) direct and through it, writes
# results and reports to bench-out/gateways/nginx, and stops what it started.
#
# Usage: scripts/gateways/nginx.sh        (DURATION=20s METHODS="paired ladder" to shorten)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/proxies-lib.sh"
install_tool nginx curl
port=18601
build
start_mock
start_nginx_proxy "$port"
run_methods nginx "http://127.0.0.1:$port/v1/chat/completions" "$proxy_info" off "$proxy_pid"
