# Shared by the proxy scripts (nginx.sh, haproxy.sh, proxies.sh): nginx and HAProxy as
# pass-through proxies in front of the mock, on CPU 1 like the mock. Each function writes its
# configuration, starts the proxy on PORT, waits until it answers, and sets proxy_pid and
# proxy_info (what the results disclose about it).

# shellcheck source=../lib/nginx.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh"

# start_nginx_proxy PORT
start_nginx_proxy() {
  local port=$1
  mkdir -p "$work/nginx"
  cat >"$work/nginx.conf" <<NGINX
$(nginx_preamble "$work" 16384)
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
  taskset -c 1 nginx -c "$work/nginx.conf" -p "$work/nginx" &
  proxy_pid=$!
  started+=("$proxy_pid")
  wait_port "$port" /health
  proxy_info="nginx $(nginx -v 2>&1 | cut -d/ -f2), 1 worker, proxy_pass with upstream keepalive 256, proxy_buffering off, access_log off"
}

# start_haproxy PORT
start_haproxy() {
  local port=$1
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
  taskset -c 1 haproxy -db -f "$work/haproxy.cfg" &
  proxy_pid=$!
  started+=("$proxy_pid")
  wait_port "$port" /health
  proxy_info="haproxy $(haproxy -v 2>&1 | head -1 | awk '{print $3}'), 1 thread, mode http, http-keep-alive, http-reuse always, no log"
}
