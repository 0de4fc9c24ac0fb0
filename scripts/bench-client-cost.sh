#!/usr/bin/env bash
# What each client spends per request, the figure a throughput race on a shared machine hides:
# CPU time (user and system, from the kernel's rusage of the client process) and system calls
# per request, closed loop against nginx (one worker pinned on CPU 1), every client pinned on
# CPU 0, interleaved in every round:
# 1. HTTP/1.1 in the clear, 64 connections: wrk -t1 -c64, oha -c 64, loadgen --concurrency 64.
# 2. HTTP/2 over TLS (ALPN h2), 4 connections x 16 streams: h2load -c4 -m16, oha --http2,
#    loadgen --http2 --connections 4 --concurrency 64 (and LOADGEN_B beside it, if given).
# CPU per request is the median over the rounds; the system calls are counted once per client
# by `strace -f -c` (which slows every client alike: counts, not times).
#
# Usage: scripts/bench-client-cost.sh [ROUNDS] [SECONDS]   (defaults: 5, 5)
#   LOADGEN_B=path: a second loadgen binary in the HTTP/2 rows.
# Needs: wrk, nginx, openssl, strace, nghttp2-client (h2load) (apt), oha (cargo install oha
# --locked), python3.
set -euo pipefail

rounds=${1:-5}
seconds=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/scripts/lib/tools.sh"
require_tool bench-client-cost wrk nginx oha h2load openssl strace taskset python3
. "$root/scripts/lib/build.sh"
build_release -p loadgen
loadgen="$root/target/release/loadgen"

plain=18536
tls=18537
body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}'
printf '%s' "$body" >"$work/body.json"
. "$root/scripts/lib/nginx.sh"
self_signed_cert "$work"
mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<NGINX
$(nginx_preamble "$work" 4096)
  http2_max_concurrent_streams 128;
  server {
    listen 127.0.0.1:$plain;
    listen 127.0.0.1:$tls ssl http2;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    location / { default_type application/json; return 200 '$NGINX_COMPLETION'; }
  }
}
NGINX
taskset -c 1 nginx -c "$work/nginx.conf" -p "$work/nginx" &
wait_answers -f "http://127.0.0.1:$plain/" || true
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA
h1="http://127.0.0.1:$plain/v1/chat/completions"
h2="https://localhost:$tls/v1/chat/completions"

# command NAME SECONDS: sets argv to client NAME's command, closed loop for SECONDS.
command_of() {
  local s=$2
  case $1 in
    wrk) argv=(taskset -c 0 wrk -t1 -c64 -d"${s}s" -s "$work/post.lua" "$h1") ;;
    oha) argv=(taskset -c 0 oha --no-tui -z "${s}s" -c 64 -m POST -T application/json -d "$body"
      --output-format json "$h1") ;;
    loadgen) argv=("$loadgen" run --target "$h1" --duration "${s}s" --pin 0 --quiet
      --concurrency 64 --connections 64 --out "$work/lg.json") ;;
    h2load) argv=(taskset -c 0 h2load -t1 -c4 -m16 -D "$s" -d "$work/body.json"
      -H 'content-type: application/json' "$h2") ;;
    oha-h2) argv=(taskset -c 0 oha --no-tui --insecure -z "${s}s" --http2 -c 4 -p 16 -m POST
      -T application/json -d "$body" --output-format json "$h2") ;;
    loadgen-h2 | loadgen-b)
      local binary=$loadgen
      [[ $1 == loadgen-b ]] && binary=$LOADGEN_B
      argv=("$binary" run --target "$h2" --cacert "$work/cert.pem" --duration "${s}s" --pin 0
        --quiet --http2 --concurrency 64 --connections 4 --out "$work/lg.json") ;;
  esac
}
# served NAME: the successful requests of client NAME's last run.
served() {
  case $1 in
    wrk) awk '/requests in/ {print $1}' "$work/out" ;;
    h2load) awk '/^requests:/ {print $8}' "$work/out" ;;
    oha | oha-h2) python3 -c "import json; s=json.load(open('$work/out'))['summary']; print(round(s['requestsPerSec']*s['successRate']*s['total']))" ;;
    *) python3 -c "import json; print(json.load(open('$work/lg.json'))['runs'][0]['ok'])" ;;
  esac
}
# cost NAME: "requests user_us sys_us" per request of one run of client NAME.
cost() {
  command_of "$1" "$seconds"
  /usr/bin/time -f "%U %S" -o "$work/t" "${argv[@]}" >"$work/out" 2>/dev/null || true
  local n
  n=$(served "$1")
  awk -v n="$n" '{printf "%d %.2f %.2f\n", n, $1 / n * 1e6, $2 / n * 1e6}' "$work/t"
}
# syscalls NAME: the system calls of one 1 s run of NAME made at least once in a hundred
# requests, per request.
syscalls() {
  command_of "$1" 1
  strace -f -c -o "$work/s" "${argv[@]}" >"$work/out" 2>/dev/null || true
  local n
  n=$(served "$1")
  grep -E '^ +[0-9]' "$work/s" | grep -vE ' (wait4|clock_nanosleep|futex)$' \
    | awk -v n="$n" '$4 / n >= 0.01 {printf "%s%s %.2f", sep, $NF, $4 / n; sep = ", "}'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
echo "nginx $(nginx -v 2>&1 | cut -d/ -f2) on CPU 1; clients on CPU 0; $(oha --version); wrk $(wrk --version 2>&1 | head -1 | awk '{print $2}'); $(h2load --version | head -1)"
sections=("HTTP/1.1 in the clear, 64 connections:wrk oha loadgen"
  "HTTP/2 over TLS, 4 connections x 16 streams:h2load oha-h2 loadgen-h2${LOADGEN_B:+ loadgen-b}")
for section in "${sections[@]}"; do
  title=${section%%:*}
  read -r -a names <<<"${section#*:}"
  echo
  echo "## $title, closed loop, ${seconds}s, $rounds rounds (CPU µs per request, medians)"
  for round in $(seq "$rounds"); do
    for name in "${names[@]}"; do echo "$name $(cost "$name")"; done
  done >"$work/rows"
  python3 - "$work/rows" "$seconds" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, n, user, system = line.split()
    rows.setdefault(name, []).append((int(n) / float(sys.argv[2]), float(user), float(system)))
print(f"{'client':12} {'ok/s':>9} {'user':>6} {'system':>7} {'total':>6}  total per round")
for name, runs in rows.items():
    med = lambda i: statistics.median(r[i] for r in runs)
    total = statistics.median(r[1] + r[2] for r in runs)
    each = ", ".join(f"{r[1] + r[2]:.2f}" for r in runs)
    print(f"{name:12} {med(0):9.0f} {med(1):6.2f} {med(2):7.2f} {total:6.2f}  {each}")
PY
  echo "system calls per request (strace -f -c, one 1 s run each):"
  for name in "${names[@]}"; do echo "  $name: $(syscalls "$name")"; done
done
