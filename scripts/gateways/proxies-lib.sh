# Shared by the proxy scripts (nginx.sh, haproxy.sh, proxies.sh): nginx and HAProxy as
# pass-through proxies in front of the mock, on CPU 1 like the mock. Each function writes its
# configuration, starts the proxy on PORT, waits until it answers, and sets proxy_pid,
# proxy_info (what the results disclose about it) and memory_args (how `loadgen profile
# --memory` counts its allocations: uprobes on the C allocator, which both call only for what
# their own pools do not serve). LOGGING (off, the default, or on) is its access log: on writes
# one line per request to a file in the scratch folder (nginx's combined format, unbuffered;
# HAProxy's httplog to its stdout, redirected to the file).

# shellcheck source=../lib/nginx.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh"

# start_nginx_proxy PORT [LOGGING]
start_nginx_proxy() {
  local port=$1 logging=${2:-off}
  local access_log="" log_info="access_log off"
  if [ "$logging" = on ]; then
    access_log="access_log $work/nginx/access.log combined;"
    log_info="access_log to a file (combined, unbuffered)"
  fi
  mkdir -p "$work/nginx"
  cat >"$work/nginx.conf" <<NGINX
$(nginx_preamble "$work" 16384)
  upstream mock { server 127.0.0.1:$mock_port; keepalive 256; }
  server {
    listen 127.0.0.1:$port;
    $access_log
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
  proxy_info="nginx $(nginx -v 2>&1 | cut -d/ -f2), 1 worker, proxy_pass with upstream keepalive 256, proxy_buffering off, $log_info"
  memory_args=(--memory-source c)
}

# start_haproxy PORT [LOGGING]
start_haproxy() {
  local port=$1 logging=${2:-off}
  local global_log="" defaults_log="" log_info="no log"
  if [ "$logging" = on ]; then
    global_log="log stdout format raw local0"
    defaults_log=$'log global\n  option httplog'
    log_info="option httplog to stdout, redirected to a file"
  fi
  cat >"$work/haproxy.cfg" <<CFG
global
  nbthread 1
  $global_log
  # Each connection is two descriptors (client and server side): keep under the open-file limit.
  maxconn 8000
defaults
  mode http
  $defaults_log
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
  if [ "$logging" = on ]; then
    taskset -c 1 haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy-access.log" &
  else
    taskset -c 1 haproxy -db -f "$work/haproxy.cfg" &
  fi
  proxy_pid=$!
  started+=("$proxy_pid")
  wait_port "$port" /health
  proxy_info="haproxy $(haproxy -v 2>&1 | head -1 | awk '{print $3}'), 1 thread, mode http, http-keep-alive, http-reuse always, $log_info"
  memory_args=(--memory-source c)
}
