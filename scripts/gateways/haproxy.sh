#!/usr/bin/env bash
# HAProxy as a pass-through proxy in front of the mock: a second zero-logic baseline. Installs
# haproxy from apt if missing, runs the profiles (scripts/gateways/lib.sh) direct and through
# it, writes results and reports to bench-out/gateways/haproxy, and stops what it started.
#
# Usage: scripts/gateways/haproxy.sh      (DURATION=20s METHODS="paired ladder" to shorten)
. "$(dirname "$0")/lib.sh"
need haproxy haproxy
need curl curl
port=18602
build
cat >"$work/haproxy.cfg" <<CFG
global
  nbthread 1
  # Each connection is two descriptors (client and server side): keep under the open-file limit.
  maxconn 8000
defaults
  mode http
  timeout connect 5s
  timeout client 300s
  timeout server 300s
  option http-keep-alive
  http-reuse always
frontend gateway
  bind 127.0.0.1:$port
  default_backend mock
backend mock
  server mock 127.0.0.1:$mock_port maxconn 4096
CFG
start_mock
taskset -c 1 haproxy -db -f "$work/haproxy.cfg" &
started+=($!)
wait_port "$port" /health
version=$(haproxy -v 2>&1 | head -1 | awk '{print $3}')
run_methods haproxy "http://127.0.0.1:$port/v1/chat/completions" \
  "haproxy $version, 1 thread, mode http, http-keep-alive, http-reuse always, no log" off \
  "${started[-1]}"
