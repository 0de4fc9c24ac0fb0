#!/usr/bin/env bash
# What running the mock in a container adds to each call: the mock on the host, against the
# same image's mock in a container on the bridge network (a published port: Docker's
# userland proxy and NAT) and on the host network, all on CPU 1, measured by
# `loadgen overhead` with the paired-latency preset from CPU 0, a second host mock as the
# twin. The containers are treated as gateways: what they "add" is the container's network path.
#
# Usage: scripts/docker/bench-sidecar.sh     (ROUNDS=150 TRIALS=3; needs docker and curl)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=gatebench-sidecar-$$
docker info >/dev/null 2>&1 || { echo "bench-sidecar: the docker daemon does not answer" >&2; exit 2; }
"$root/scripts/docker/build-local.sh" >/dev/null
mock="$root/target/release/mock-upstream"
loadgen="$root/target/release/loadgen"
started=()
cleanup() {
  docker rm -f "$prefix-bridge" "$prefix-host" >/dev/null 2>&1 || true
  for pid in "${started[@]:-}"; do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
. "$root/scripts/lib/ports.sh"
wait_port() {
  wait_answers -f "http://127.0.0.1:$1/health" 200 && return 0
  echo "bench-sidecar: nothing answers on port $1" >&2; exit 2
}
taskset -c 1 "$mock" --listen 127.0.0.1:18620 --threads 1 >/dev/null 2>&1 & started+=($!)
taskset -c 1 "$mock" --listen 127.0.0.1:18623 --threads 1 >/dev/null 2>&1 & started+=($!)
docker run -d --name "$prefix-bridge" --cpuset-cpus 1 -e MOCK_THREADS=1 \
  -p 127.0.0.1:18621:8080 gatebench/mock-upstream:local >/dev/null
docker run -d --name "$prefix-host" --cpuset-cpus 1 --network host -e MOCK_THREADS=1 \
  -e MOCK_LISTEN=127.0.0.1:18622 gatebench/mock-upstream:local >/dev/null
for port in 18620 18621 18622 18623; do wait_port "$port"; done
url() { echo "http://127.0.0.1:$1/v1/chat/completions"; }
docker_version=$(docker version --format '{{.Server.Version}}')
taskset -c 0 "$loadgen" overhead --preset "$root/presets/paired-latency.toml" \
  --direct "$(url 18620)" --twin "$(url 18623)" \
  --gateway "bridge=$(url 18621)" --gateway "host-network=$(url 18622)" \
  --gateway-info "bridge=Docker $docker_version, bridge network, port published on 127.0.0.1 (userland proxy)" \
  --gateway-info "host-network=Docker $docker_version, --network host" \
  ${ROUNDS:+--rounds "$ROUNDS"} ${TRIALS:+--trials "$TRIALS"} --cores 0 --quiet \
  --out "${OUT:-$root/bench-out/sidecar.json}"
