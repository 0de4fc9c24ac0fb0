#!/usr/bin/env bash
# Verdicts against an identical twin: RUNS back-to-back `loadgen overhead` runs (default
# settings: 10 trials x 50 rounds, chat and chat-stream) with four separate mock processes:
# direct, the twin (--twin), a third identical one named `same`, and one that adds exactly
# 200 µs (`--latency 200us --ttft 200us` on the mock's precise timer, spinning its last 50 µs: 200 µs more to a whole answer, to the first token and to the end of a stream) named
# `plus200`; and, where nginx is installed, nginx as a pass-through proxy in front of the direct
# mock (a real gateway's 20-50 µs, on CPU 0 too) named `nginx`. Counts, over the runs, how often
# `same` or the twin was called different (must be 0) and how often `plus200` and `nginx` were
# found (must be every time), with their estimates.
#
# MODE=default (or `default` as the second argument) runs loadgen with its defaults instead: no
# --twin and no twin mock of our own, so loadgen starts its own second mock with the direct
# mock's configuration (every mock here then takes --cores 0, which that configuration carries, so
# loadgen's twin lands on CPU 0 too rather than on loadgen's CPU). The summary names the twin
# each run used (`resolution_source`). MODE=twin (the default) is the run described above.
#
# Usage: scripts/bench-twin.sh [RUNS] [twin|default]   (default 10 twin; mocks on CPU 0,
#        loadgen on CPU 1)
# Needs: curl, python3.
set -euo pipefail

runs=${1:-10}
mode=${MODE:-${2:-twin}}
case "$mode" in
  twin | default) ;;
  *) echo "bench-twin: mode '$mode': expected twin or default" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"; [ -n "${KEEP:-}" ] && echo "kept $work" >&2' EXIT
. "$root/scripts/lib/build.sh"
build_release -p mock-upstream --bin mock-upstream
build_release -p loadgen --bin loadgen
mock_bin="$root/target/release/mock-upstream"
loadgen_bin="$root/target/release/loadgen"

. "$root/scripts/lib/ports.sh"
ports=(18451 18452 18453 18454 18455)
require_free_ports bench-twin "${ports[@]}"
start() { # port [flags...]
  local port=$1
  shift
  taskset -c 0 "$mock_bin" --listen "127.0.0.1:$port" --threads 1 "${cores[@]}" "$@" 2>/dev/null &
  wait_answers "http://127.0.0.1:$port/health" || { echo "bench-twin: mock on $port did not start" >&2; exit 2; }
}
cores=()
twin_flag=(--twin "http://127.0.0.1:18452/v1/chat/completions")
if [ "$mode" = default ]; then
  cores=(--cores 0)
  twin_flag=()
fi
start 18451
[ "$mode" = default ] || start 18452
start 18453
start 18454 --latency 200us --ttft 200us --spin 50us
url() { echo "http://127.0.0.1:$1/v1/chat/completions"; }
nginx_flag=()
if command -v nginx >/dev/null; then
  . "$root/scripts/lib/nginx.sh"
  mkdir -p "$work/nginx"
  cat >"$work/nginx.conf" <<NGINX
$(nginx_preamble "$work" 1024)
  upstream mock { server 127.0.0.1:18451; keepalive 64; }
  server {
    listen 127.0.0.1:18455;
    location / {
      proxy_pass http://mock;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
NGINX
  taskset -c 0 nginx -c "$work/nginx.conf" -p "$work/nginx" &
  wait_answers "http://127.0.0.1:18455/health" || { echo "bench-twin: nginx did not start" >&2; exit 2; }
  nginx_flag=(--gateway "nginx=$(url 18455)")
else
  echo "bench-twin: nginx not installed (apt-get install nginx): its row is left out" >&2
fi

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
if [ "$mode" = default ]; then
  echo "three mock processes on CPU 0 (direct, same, plus200 = --latency 200us --ttft 200us --spin 50us), the twin started by loadgen itself (no --twin); loadgen overhead on CPU 1, default settings"
else
  echo "four mock processes on CPU 0 (direct, twin, same, plus200 = --latency 200us --ttft 200us --spin 50us); loadgen overhead on CPU 1, default settings"
fi
for run in $(seq "$runs"); do
  taskset -c 1 "$loadgen_bin" overhead --quiet --seed "$run" \
    --direct "$(url 18451)" "${twin_flag[@]}" \
    --gateway "same=$(url 18453)" --gateway "plus200=$(url 18454)" "${nginx_flag[@]}" \
    --out "$work/run-$run.json" >/dev/null || true
done

python3 - "$work" "$runs" <<'PY'
import json, sys
work, runs = sys.argv[1], int(sys.argv[2])
called = {"same": 0, "twin": 0}
found, rows, estimates, resolutions, per_trial_called = 0, 0, [], [], 0
per_trial_rows = 0
sources = set()
nginx = []
for run in range(1, runs + 1):
    r = json.load(open(f"{work}/run-{run}.json"))
    twin = next((t for t in r["plan"]["targets"] if t["name"] == "twin"), {})
    source = r.get("resolution_source") or twin.get("info") or ""
    # A started mock's pid and port differ from run to run: keep what it was.
    sources.add(source.split(" (")[0] if source.startswith("a second mock") else source)
    for c in r["combined"]:
        g, v = c["gateway"], c["verdict"]
        if g == "twin":
            resolutions.append(c["resolution_us"])
            if not v.startswith("control"):
                called["twin"] += 1
        elif g == "same":
            rows += 1
            if v.startswith("adds") or v.startswith("faster"):
                called["same"] += 1
        elif g == "plus200":
            estimates.append(c["added_us"]["estimate"])
            if v == "adds latency":
                found += 1
        elif g == "nginx":
            nginx.append((c["scenario"], c["metric"], c["added_us"]["estimate"], v))
    for t in r["trials"]:
        for d in t["deltas"]:
            if d["gateway"] in ("same", "twin"):
                per_trial_rows += 1
                per_trial_called += d["distinguishable"]
n200 = len(estimates)
estimates.sort(); resolutions.sort()
print(f"runs: {runs}; rows per target: {rows // runs} (scenarios x metrics)")
print(f"same called different: {called['same']} of {rows} rows (per-trial intervals alone: {per_trial_called} of {per_trial_rows} rows of same and twin excluded zero)")
print(f"plus200 found: {found} of {n200} rows; estimate min {estimates[0]:.1f}, median {estimates[n200 // 2]:.1f}, max {estimates[-1]:.1f} µs")
if nginx:
    found_nginx = sum(1 for n in nginx if n[3] == "adds latency")
    print(f"nginx found: {found_nginx} of {len(nginx)} rows")
    for key in sorted({(n[0], n[1]) for n in nginx}):
        xs = sorted(n[2] for n in nginx if (n[0], n[1]) == key)
        print(f"  {key[0]} {key[1]}: estimate min {xs[0]:.1f}, median {xs[len(xs) // 2]:.1f}, max {xs[-1]:.1f} µs")
print(f"twin: {'; '.join(sorted(sources))}")
print(f"resolution (twin): min {resolutions[0]:.1f}, median {resolutions[len(resolutions) // 2]:.1f}, max {resolutions[-1]:.1f} µs")
PY
