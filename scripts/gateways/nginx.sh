#!/usr/bin/env bash
# nginx as a pass-through proxy in front of the mock: the zero-logic baseline. Installs nginx
# from apt if missing, runs the profiles (scripts/gateways/lib.sh) direct and through it, writes
# results and reports to bench-out/gateways/nginx, and stops what it started.
#
# Usage: scripts/gateways/nginx.sh        (DURATION=20s METHODS="paired ladder" to shorten)
. "$(dirname "$0")/lib.sh"
need nginx nginx
need curl curl
port=18601
build
mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
worker_rlimit_nofile 65536;
events { worker_connections 16384; }
http {
  access_log off;
  keepalive_requests 10000000;
  client_body_temp_path $work/nginx;
  proxy_temp_path $work/nginx;
  fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx;
  scgi_temp_path $work/nginx;
  upstream mock { server 127.0.0.1:$mock_port; keepalive 256; }
  server {
    listen 127.0.0.1:$port;
    location / {
      proxy_pass http://mock;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 300s;
    }
  }
}
NGINX
start_mock
taskset -c 1 nginx -c "$work/nginx.conf" -p "$work/nginx" &
started+=($!)
wait_port "$port" /health
version=$(nginx -v 2>&1 | cut -d/ -f2)
run_methods nginx "http://127.0.0.1:$port/v1/chat/completions" \
  "nginx $version, 1 worker, proxy_pass with upstream keepalive 256, proxy_buffering off, access_log off" off \
  "${started[-1]}"
