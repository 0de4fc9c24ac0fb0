#!/usr/bin/env bash
# The container images, run for real: builds them from this checkout's release build
# (build-local.sh), then checks that
#   1. the mock runs read-only, as a non-root user, with every capability dropped, and its
#      HEALTHCHECK reports it healthy;
#   2. loadgen's image sends chat and streaming requests to it, every one answered, and MOCK_*
#      variables are honoured (MOCK_TOKENS: the tokens each stream carries);
#   3. `docker stop` ends the mock (PID 1) cleanly within its grace: exit code 0, in under 5 s;
#   4. the project's compose file (scripts/docker/compose.yml, with these images) brings the mock
#      up healthy with Debian's docker-compose, its loadgen service runs through it, and it
#      comes down (its LiteLLM service needs a registry image, so it is not started).
# Every container uses the host's network and the mock listens on 127.0.0.1 only, so every
# request the check sends is addressed to loopback (MOCK_PORT, default 18580). Skipped, with the
# reason and exit 0, where docker cannot run containers (SKIP_DOCKER_CHECK=0 makes that a
# failure instead). Every container it makes is removed at the end.
#
# Usage: scripts/docker/check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=gatebench-check-$$
. "$root/scripts/lib/tools.sh"
skip() { skip_check docker SKIP_DOCKER_CHECK "$1"; }
command -v docker >/dev/null || skip "docker is not installed (apt-get install docker.io, then start dockerd)"
docker info >/dev/null 2>&1 || skip "the docker daemon does not answer (start dockerd)"

cleanup() {
  docker rm -f "$prefix-mock" >/dev/null 2>&1 || true
  if [ -n "${compose_file:-}" ]; then
    docker-compose -p "$prefix" -f "$root/scripts/docker/compose.yml" -f "$compose_file" \
      down -v >/dev/null 2>&1 || true
    rm -f "$compose_file"
  fi
  rm -f "${report:-}"
}
trap cleanup EXIT
report=$(mktemp)
fail() { echo "docker check FAILED: $*" >&2; exit 1; }

"$root/scripts/docker/build-local.sh"
mock_image=gatebench/mock-upstream:local
loadgen_image=gatebench/loadgen:local
port=${MOCK_PORT:-18580}
. "$root/scripts/lib/ports.sh"
require_free_ports "docker check" "$port"

# 1. Locked down, healthy.
docker run -d --name "$prefix-mock" --network host --read-only --user 65532:65532 \
  --cap-drop ALL --security-opt no-new-privileges --stop-timeout 10 \
  -e MOCK_LISTEN="127.0.0.1:$port" -e MOCK_TOKENS=7 -e MOCK_SEED=3 "$mock_image" >/dev/null
for _ in $(seq 60); do
  status=$(docker inspect -f '{{.State.Health.Status}}' "$prefix-mock")
  [ "$status" = healthy ] && break
  sleep 0.5
done
[ "$status" = healthy ] || fail "the mock's HEALTHCHECK says '$status' after 30 s: $(docker logs "$prefix-mock" 2>&1 | tail -3)"
user=$(docker inspect -f '{{.Config.User}}' "$prefix-mock")
[ "$user" = 65532:65532 ] || fail "the mock runs as '$user'"
echo "ok: the mock is healthy, read-only, user $user, no capabilities"

# 2. loadgen's image, on the host's network to the mock's loopback port; MOCK_TOKENS honoured.
for scenario in chat chat-stream; do
  out=$(docker run --rm --network host --read-only --cap-drop ALL "$loadgen_image" run \
    --target "http://127.0.0.1:$port/v1/chat/completions" --scenario "$scenario" \
    --max-tokens 100 --rate 100 --duration 2s --connections 4 --quiet --out - 2>"$report") \
    || true
  # Exit 1 is a run judged invalid (on a loaded machine, the generator's own lag): the
  # requests' answers are what is checked here.
  [ -n "$out" ] || fail "loadgen's $scenario run wrote no result: $(cat "$report")"
  python3 - "$scenario" "$out" <<'PY' || fail "loadgen's $scenario run: see above"
import json, sys
scenario, text = sys.argv[1], sys.argv[2]
run = json.loads(text.splitlines()[0])["runs"][0]
assert run["ok"] == 200 and run["failed"] == 0, (run["ok"], run["errors"])
if scenario == "chat-stream":
    tokens = run["metrics"]["output_tokens"]["p50"]
    assert tokens == 7, f"MOCK_TOKENS=7 but streams carried {tokens} tokens"
print(f"ok: loadgen's image sent 200 {scenario} requests to the mock's container, all answered")
PY
done

# 3. docker stop: SIGTERM to PID 1, a clean exit within the grace.
started=$(date +%s.%N)
docker stop "$prefix-mock" >/dev/null
took=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
code=$(docker inspect -f '{{.State.ExitCode}}' "$prefix-mock")
[ "$code" = 0 ] || fail "the mock exited with $code on docker stop"
awk -v t="$took" 'BEGIN {exit !(t < 5)}' || fail "docker stop took ${took} s (SIGTERM not handled?)"
echo "ok: docker stop ended the mock with exit code 0 in ${took} s"

# 4. The project's compose file (scripts/docker/compose.yml), its images taken from the local
#    build, on the host's network with the mock on 127.0.0.1: the mock service comes up healthy
#    with Debian's docker-compose, loadgen's one-shot service runs through it, and everything
#    comes down. (Its LiteLLM service needs ghcr.io, which is not reachable here: it is not
#    started.)
if command -v docker-compose >/dev/null; then
  compose_file=$(mktemp --suffix=.yml)
  # compose.yml raises the open-file limit to 65,536, which a container cannot do past the
  # daemon's own hard limit (20,000 on this project's machine): held to that limit here.
  nofile=$(ulimit -Hn)
  [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ] && nofile=65536
  cat >"$compose_file" <<YAML
services:
  mock:
    image: $mock_image
    network_mode: host
    environment:
      MOCK_LISTEN: "127.0.0.1:$port"
    read_only: true
    cap_drop: [ALL]
    ulimits:
      nofile: {soft: $nofile, hard: $nofile}
  loadgen:
    image: $loadgen_image
    network_mode: host
    ulimits:
      nofile: {soft: $nofile, hard: $nofile}
YAML
  compose=(docker-compose -p "$prefix" -f "$root/scripts/docker/compose.yml" -f "$compose_file")
  "${compose[@]}" up -d mock >/dev/null 2>&1 || fail "docker-compose up failed"
  for _ in $(seq 60); do
    status=$(docker inspect -f '{{.State.Health.Status}}' "$("${compose[@]}" ps -q mock)")
    [ "$status" = healthy ] && break
    sleep 0.5
  done
  [ "$status" = healthy ] || fail "the compose mock says '$status'"
  said=$("${compose[@]}" run --rm --no-deps loadgen run \
    --target "http://127.0.0.1:$port/v1/chat/completions" --rate 50 --duration 1s --quiet 2>&1) || true
  echo "$said" | grep -q "ok 50 (100.00%)" || fail "the compose run: $said"
  "${compose[@]}" down -v >/dev/null 2>&1 || fail "docker-compose down failed"
  echo "ok: docker-compose brought up compose.yml's mock, ran its loadgen service through it, and took it down"
else
  skip "docker-compose is not installed (apt-get install docker-compose); the rest passed"
fi
echo "docker check passed"
