#!/usr/bin/env bash
# loadgen over TLS and HTTP/2 against nginx (a self-signed certificate made here with openssl),
# interleaved in one run with wrk, oha and h2load. nginx (one worker) is pinned on CPU 1, every
# client on CPU 0, each closed-loop for the same seconds:
# 1. HTTP/1.1 over TLS, 64 connections: loadgen --concurrency 64, wrk -t1 -c64, oha -c 64.
# 2. HTTP/2 over TLS (ALPN h2), 4 connections x 16 streams: loadgen --http2 --connections 4
#    --concurrency 64, oha --http2 -c 4 -p 16, and h2load -c 4 -m 16 beside them.
# Every client sends the same POST body and checks nothing but the status (loadgen also
# validates each body).
#
# Usage: scripts/bench-tls.sh [ROUNDS] [SECONDS]   (defaults: 3, 10)
#   LOADGEN_B=path: a second loadgen binary in the HTTP/2 rows, beside this checkout's (what a
#   change to the HTTP/2 client bought, in the same rounds); ONLY=h2: the HTTP/2 rows alone.
# Needs: wrk, nginx, curl, openssl, nghttp2-client (h2load) (apt), oha (cargo install oha
# --locked), python3.
set -euo pipefail

rounds=${1:-3}
seconds=${2:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/scripts/lib/tools.sh"
require_tool bench-tls wrk nginx oha h2load curl openssl taskset python3
. "$root/scripts/lib/build.sh"
build_release -p loadgen
loadgen="$root/target/release/loadgen"

port=18533
url="https://localhost:$port/v1/chat/completions"
body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}'
printf '%s' "$body" >"$work/body.json"

. "$root/scripts/lib/nginx.sh"
. "$root/scripts/lib/stats.sh"
self_signed_cert "$work"
printf '%s' "$NGINX_COMPLETION" >"$work/completion.json"
mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<NGINX
$(nginx_preamble "$work" 4096)
  http2_max_concurrent_streams 128;
  server {
    listen 127.0.0.1:$port ssl http2;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    location / { default_type application/json; return 200 '$(cat "$work/completion.json")'; }
  }
}
NGINX
taskset -c 1 nginx -c "$work/nginx.conf" -p "$work/nginx" &
. "$root/scripts/lib/ports.sh"
wait_answers -k "https://127.0.0.1:$port/" || true

cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA

lg() { # loadgen options... -> its throughput (ok/s); LG=path runs another binary
  # --pin, --cores's former name: builds from before the rename take it too.
  "${LG:-$loadgen}" run --target "$url" --cacert "$work/cert.pem" --duration "${seconds}s" --pin 0 --quiet \
    --out "$work/lg.json" "$@" >/dev/null || true
  python3 -c "import json; r=json.load(open('$work/lg.json'))['runs'][0]; print(round(r['throughput'],1))"
}
lg_handshake() { # the last loadgen run's TLS handshake p50 (µs) and protocol
  python3 -c "import json; r=json.load(open('$work/lg.json'))['runs'][0]['connect']; print(r['tls_handshake_us']['p50'], r['protocol'])"
}
oha_rps() {
  taskset -c 0 oha --no-tui --insecure -z "${seconds}s" -m POST -T application/json -d "$body" \
    --output-format json "$@" "$url" \
    | python3 -c "import json,sys; s=json.load(sys.stdin)['summary']; print(round(s['requestsPerSec']*s['successRate'],1))"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
echo "nginx $(nginx -v 2>&1 | cut -d/ -f2) (OpenSSL $(openssl version | awk '{print $2}')) on CPU 1; clients on CPU 0"
echo "$(oha --version); wrk $(wrk --version 2>&1 | head -1 | awk '{print $2}'); $(h2load --version | head -1)"
if [[ ${ONLY:-} != h2 ]]; then
echo
echo "## HTTP/1.1 over TLS, closed loop, 64 connections, ${seconds}s (successful requests/s)"
printf "%-6s %10s %10s %10s %9s %9s %14s\n" round wrk oha loadgen "lg/wrk" "lg/oha" "handshake p50"
r_wrk=(); r_oha=()
for round in $(seq "$rounds"); do
  w=$(taskset -c 0 wrk -t1 -c64 -d"${seconds}s" -s "$work/post.lua" "$url" | awk '/Requests\/sec/ {print $2}')
  o=$(oha_rps -c 64)
  l=$(lg --concurrency 64 --connections 64)
  hs=$(lg_handshake)
  a=$(ratio "$l" "$w"); b=$(ratio "$l" "$o")
  r_wrk+=("$a"); r_oha+=("$b")
  printf "%-6s %10s %10s %10s %9s %9s %14s\n" "$round" "$w" "$o" "$l" "$a" "$b" "${hs}"
done
echo "median loadgen/wrk $(median "${r_wrk[@]}"), loadgen/oha $(median "${r_oha[@]}")"
fi

echo
echo "## HTTP/2 over TLS (ALPN h2), closed loop, 4 connections x 16 streams, ${seconds}s (successful requests/s)"
printf "%-6s %10s %10s %10s %9s %9s" round h2load oha loadgen "lg/oha" "lg/h2load"
[[ -n ${LOADGEN_B:-} ]] && printf " %10s %9s" "B" "B/h2load"
echo
r_h2=(); r_h2load=(); r_b=()
for round in $(seq "$rounds"); do
  h=$(taskset -c 0 h2load -t1 -c4 -m16 -D "$seconds" -d "$work/body.json" -H 'content-type: application/json' "$url" 2>/dev/null \
      | awk '/^finished in/ {gsub(",", "", $4); print $4}')
  o=$(oha_rps --http2 -c 4 -p 16)
  l=$(lg --http2 --concurrency 64 --connections 4)
  hs=$(lg_handshake)
  a=$(ratio "$l" "$o"); b=$(ratio "$l" "$h")
  r_h2+=("$a"); r_h2load+=("$b")
  printf "%-6s %10s %10s %10s %9s %9s" "$round" "$h" "$o" "$l" "$a" "$b"
  if [[ -n ${LOADGEN_B:-} ]]; then
    lb=$(LG=$LOADGEN_B lg --http2 --concurrency 64 --connections 4)
    c=$(ratio "$lb" "$h"); r_b+=("$c")
    printf " %10s %9s" "$lb" "$c"
  fi
  printf "   (%s)\n" "$hs"
done
echo "median loadgen/oha $(median "${r_h2[@]}"), loadgen/h2load $(median "${r_h2load[@]}")"
[[ -n ${LOADGEN_B:-} ]] && echo "median B/h2load $(median "${r_b[@]}") (B: $LOADGEN_B)"
