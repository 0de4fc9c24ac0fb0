# Shared by the bench scripts: an nginx configuration that answers every request with a fixed
# JSON body, one worker, keep-alive without limit, everything under a work folder. With
# STREAM_FILE, GET /stream serves that file as text/event-stream (a static file: nginx's own
# strings are too short for a stream).

# shellcheck source=SCRIPTDIR/ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

# Usage: write_nginx_conf WORK PORT BODY_FILE [STREAM_FILE]   (writes WORK/nginx.conf)
write_nginx_conf() {
  local work=$1 port=$2 body_file=$3 stream_file=${4:-}
  local stream_location=""
  if [ -n "$stream_file" ]; then
    stream_location="location = /stream { default_type text/event-stream; alias $stream_file; }"
  fi
  mkdir -p "$work/nginx"
  cat >"$work/nginx.conf" <<NGINX
$(nginx_preamble "$work" 4096)
  server {
    listen 127.0.0.1:$port;
    location / { default_type application/json; return 200 '$(cat "$body_file")'; }
    $stream_location
  }
}
NGINX
}

# nginx_preamble WORK CONNECTIONS: what every nginx here shares, up to the inside of its http
# block: one worker in the foreground, every file under WORK/nginx, no access log, keep-alive
# without limit.
nginx_preamble() {
  local work=$1 connections=$2
  cat <<NGINX
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
worker_rlimit_nofile $((connections * 4));
events { worker_connections $connections; }
http {
  access_log off;
  keepalive_requests 10000000;
  # Bodies up to 1 MB stay in memory: past the default 16 KB nginx writes them to a temporary
  # file, which its worker (user nobody) cannot create in a scratch folder of mode 0700, and
  # answers 500 (a conversation's history crosses 16 KB within a few turns).
  client_body_buffer_size 1m;
  client_body_temp_path $work/nginx;
  proxy_temp_path $work/nginx;
  fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx;
  scgi_temp_path $work/nginx;
NGINX
}

# The fixed chat completion the bench scripts' nginx answers with.
# shellcheck disable=SC2034 # used by the scripts that source this file
NGINX_COMPLETION='{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello from nginx."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}'

# self_signed_cert WORK: a throwaway P-256 certificate for localhost and 127.0.0.1, valid for a
# day, as WORK/cert.pem with its key WORK/key.pem. Needs openssl.
self_signed_cert() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -keyout "$1/key.pem" -out "$1/cert.pem" -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>/dev/null
}

# start_completion_nginx WORK PORT CPU: nginx answering every request with a fixed chat
# completion, one worker pinned to CPU, as a background job of the calling shell (its EXIT trap
# kills it); returns once it answers.
start_completion_nginx() {
  local work=$1 port=$2 cpu=$3
  printf '%s' "$NGINX_COMPLETION" >"$work/completion.json"
  write_nginx_conf "$work" "$port" "$work/completion.json"
  taskset -c "$cpu" nginx -c "$work/nginx.conf" -p "$work/nginx" &
  wait_answers "http://127.0.0.1:$port/" && return 0
  echo "nginx did not answer on port $port" >&2
  return 1
}
