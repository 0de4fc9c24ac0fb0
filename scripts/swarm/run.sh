#!/usr/bin/env bash
# Runs one preset as N loadgen shards on Docker Swarm and merges their results.
#
#   scripts/swarm/run.sh [SHARDS]           # on the swarm the docker CLI talks to (default 4)
#   LOCAL=1 scripts/swarm/run.sh [SHARDS]   # a throwaway two-node swarm of its own, on this host
#
# A replicated service of SHARDS tasks, one per shard, spread over the nodes: the loadgen image
# (FROM scratch, scripts/docker/build-local.sh), host networking, the preset as a Swarm config,
# and in each task's environment LOADGEN_SHARD=slot:{{.Task.Slot}}/N (Swarm numbers a replicated
# service's tasks from 1; a replicated job's from 0, but renders slot 0 as the node's id, so a
# job cannot carry its shard), LOADGEN_START_AT (now + LEAD) and LOADGEN_METRICS_LISTEN
# (METRICS_HOST:METRICS_PORT+shard), LOADGEN_METRICS_LINGER (METRICS_LINGER). Tasks never restart (--restart-condition none), and a task
# started after the start instant refuses to run, so no shard is ever sent twice. The script
# writes OUT/prometheus-targets.json (every task's node address and port, for Prometheus'
# file_sd: Swarm's discovery gives no address for a host-network task) as soon as every task is
# placed, waits until every task has ended or DEADLINE passed, saves each task's log as
# OUT/shard-I.log, names every shard without a result (failed, killed, never started) in the
# merged result, removes the service and config, merges into OUT/merged.json and prints its
# path last.
#
# LOCAL=1 starts two dockerd of its own (their own sockets, data and exec roots and pidfiles
# under a temporary folder, no bridge, no iptables rules; never the user's daemon or swarm),
# makes the first a manager and the second a worker joined on 127.0.0.1, builds the images into
# the first and loads them into the second (no registry), starts a mock on 127.0.0.1 as the
# target and clock reference, runs the shards across both nodes, and stops only what it
# started. Its preset is scripts/swarm/local.toml with the mock's address filled in.
#
# Settings: PRESET (PROFILE, its former name, is still read; default scripts/swarm/run.toml;
# LOCAL: local.toml), IMAGE (default
# gatebench/loadgen:local), LEAD (seconds to the start, default 20), DEADLINE (seconds after the
# start for every task to end, default 120), OUT (default swarm-results), LOADGEN (the binary
# that merges, default target/release/loadgen, else loadgen on PATH), METRICS_HOST (default
# 0.0.0.0; LOCAL: 127.0.0.1), METRICS_PORT (default 9600), METRICS_LINGER (how long each shard
# serves its final counts after its run, default 3s), MERGE_FLAGS (more `loadgen merge`
# flags, like --max-p99 50ms). LOCAL only: MOCK_PORT (default 18480), KILL=I (kill shard I's
# container half-way through the run, to see a lost shard named), SWARM_PORT (default 2477: the
# manager's; the worker's is one more).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/shards.sh"
. "$root/scripts/lib/tools.sh"
require_tool swarm/run docker

shards=${1:-4}
lead=${LEAD:-20}
deadline=${DEADLINE:-120}
out=${OUT:-swarm-results}
image=${IMAGE:-gatebench/loadgen:local}
metrics_port=${METRICS_PORT:-9600}
read -r -a merge_flags <<<"${MERGE_FLAGS:-}"
if [ -z "${LOADGEN:-}" ]; then
  LOADGEN=$root/target/release/loadgen
  [ -x "$LOADGEN" ] || LOADGEN=loadgen
fi
[[ $shards =~ ^[1-9][0-9]*$ ]] || {
  echo "swarm/run: SHARDS must be a whole number of at least 1, not '$shards'" >&2
  exit 2
}
mkdir -p "$out"
rm -f "$out"/shard-*.log "$out/merged.json" "$out/merged.md"
name=gatebench-shards-$$
work=$(mktemp -d /tmp/gbswarm.XXXXXX)
started_here=()
created=""
# LOCAL=1 talks only to its own manager, from the first docker call to the last (cleanup too).
[ -n "${LOCAL:-}" ] && export DOCKER_HOST=unix://$work/manager/docker.sock

cleanup() {
  set +e
  if [ -n "$created" ]; then
    docker service rm "$name" >/dev/null 2>&1
    docker config rm "$name" >/dev/null 2>&1
  fi
  if [ -n "${LOCAL:-}" ]; then
    local_stop
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- LOCAL=1: two daemons of our own, a mock on loopback --------------------------------------
# local_daemon NAME: starts a dockerd whose every path is under $work/NAME.
local_daemon() {
  local dir=$work/$1
  mkdir -p "$dir"
  # Its own containerd namespaces too: a dockerd finding the host's containerd socket would
  # otherwise share its default namespace with the host's daemon.
  dockerd -H "unix://$dir/docker.sock" --data-root "$dir/data" --exec-root "$dir/exec" \
    --pidfile "$dir/docker.pid" --bridge=none --iptables=false --ip-forward=false \
    --containerd-namespace "gatebench-$1-$$" --containerd-plugins-namespace "gatebench-$1-$$-plugins" \
    >"$dir/dockerd.log" 2>&1 &
  started_here+=("$!")
  for _ in $(seq 100); do
    docker -H "unix://$dir/docker.sock" info >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "swarm/run: dockerd $1 did not start: $(tail -n 3 "$dir/dockerd.log")" >&2
  return 1
}

local_stop() {
  local pid dir
  [ -n "${mock_pid:-}" ] && kill "$mock_pid" 2>/dev/null
  # The daemons' own containers first, so none outlives its daemon.
  for dir in manager worker; do
    [ -S "$work/$dir/docker.sock" ] || continue
    docker -H "unix://$work/$dir/docker.sock" ps -aq 2>/dev/null \
      | xargs -r docker -H "unix://$work/$dir/docker.sock" rm -f >/dev/null 2>&1
  done
  for pid in "${started_here[@]}"; do
    kill "$pid" 2>/dev/null
  done
  for pid in "${started_here[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  done
  # What a killed daemon left mounted under its roots.
  grep -o " $work/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
}

if [ -n "${LOCAL:-}" ]; then
  command -v dockerd >/dev/null || {
    echo "swarm/run: LOCAL=1 needs dockerd (apt-get install docker.io)" >&2
    exit 2
  }
  swarm_port=${SWARM_PORT:-2477}
  mock_port=${MOCK_PORT:-18480}
  . "$root/scripts/lib/ports.sh"
  require_free_ports swarm/run "$mock_port"
  . "$root/scripts/lib/build.sh"
  build_release -p mock-upstream -p loadgen
  local_daemon manager
  local_daemon worker
  manager=unix://$work/manager/docker.sock
  worker=unix://$work/worker/docker.sock
  docker -H "$manager" swarm init --advertise-addr "127.0.0.1:$swarm_port" \
    --listen-addr "127.0.0.1:$swarm_port" >/dev/null
  token=$(docker -H "$manager" swarm join-token -q worker)
  docker -H "$worker" swarm join --token "$token" --listen-addr "127.0.0.1:$((swarm_port + 1))" \
    --advertise-addr "127.0.0.1:$((swarm_port + 1))" "127.0.0.1:$swarm_port" >/dev/null
  "$root/scripts/docker/build-local.sh" >/dev/null
  docker -H "$manager" save "$image" | docker -H "$worker" load >/dev/null
  shards_local_mock "$root" "$mock_port" "$work"
  preset=${PRESET:-${PROFILE:-$work/local.toml}}
  metrics_host=${METRICS_HOST:-127.0.0.1}
else
  preset=${PRESET:-${PROFILE:-$root/scripts/swarm/run.toml}}
  metrics_host=${METRICS_HOST:-0.0.0.0}
  docker node ls >/dev/null 2>&1 || {
    echo "swarm/run: the docker CLI does not talk to a swarm manager (docker swarm init, or LOCAL=1)" >&2
    exit 2
  }
fi

# --- The service ----------------------------------------------------------------------------
nodes=$(docker node ls -q | wc -l)
start_at=$(shards_start_at "$lead")
created=1
docker config create "$name" "$preset" >/dev/null
docker service create --detach --quiet --name "$name" --no-resolve-image \
  --mode replicated --replicas "$shards" --restart-condition none \
  --network host --placement-pref spread=node.id \
  --config "source=$name,target=/etc/gatebench/run.toml,mode=0444" \
  --env "LOADGEN_SHARD=slot:{{.Task.Slot}}/$shards" \
  --env "LOADGEN_START_AT=$start_at" \
  --env "LOADGEN_METRICS_LISTEN=$metrics_host:$metrics_port+shard" \
  --env "LOADGEN_METRICS_LINGER=${METRICS_LINGER:-3s}" \
  "$image" run --preset /etc/gatebench/run.toml --out - >/dev/null
echo "swarm/run: $shards shards over $nodes node(s), starting at $start_at" >&2

# tasks: one line per task of the service: slot, id, node id, state, exit code, error (two
# docker calls however many tasks, so that polling takes little from the shards' cores).
tasks() {
  local ids
  ids=$(docker service ps "$name" --no-trunc -q 2>/dev/null || true)
  [ -n "$ids" ] || return 0
  # shellcheck disable=SC2086
  # A docker call that fails now and then must not end the run (and, through the cleanup, every
  # shard): the next poll asks again.
  docker inspect -f '{{.Slot}} {{.ID}} {{if .NodeID}}{{.NodeID}}{{else}}-{{end}} {{.Status.State}} {{with .Status.ContainerStatus}}{{.ExitCode}}{{else}}-{{end}} {{.Status.Err}}' $ids 2>/dev/null || true
}

# Where every shard's metrics are, once every task has a node.
for _ in $(seq 300); do
  placed=$(tasks | awk '$3 != "-" {n++} END {print n + 0}')
  [ "$placed" -ge "$shards" ] && break
  sleep 0.2
done
python3 - "$out/prometheus-targets.json" "$metrics_port" "$metrics_host" <<PY
import json, subprocess, sys
path, port, host = sys.argv[1], int(sys.argv[2]), sys.argv[3]
targets = []
for line in """$(tasks)""".splitlines():
    slot, _, node = line.split()[:3]
    addr = host
    if host in ("0.0.0.0", "::"):
        addr = subprocess.run(["docker", "node", "inspect", "-f", "{{.Status.Addr}}", node],
                              capture_output=True, text=True).stdout.strip() or host
    shard = int(slot) - 1
    targets.append({"targets": [f"{addr}:{port + shard}"],
                    "labels": {"job": "loadgen", "shard": f"{shard}/$shards", "node": node}})
json.dump(sorted(targets, key=lambda t: t["labels"]["shard"]), open(path, "w"), indent=1)
PY

# KILL=I (LOCAL only): shard I's container killed half-way through its run.
if [ -n "${KILL:-}" ] && [ -n "${LOCAL:-}" ]; then
  shards_halfway "$preset" "$start_at"
  victim=$(tasks | awk -v slot=$((KILL + 1)) '$1 == slot {print $2; exit}')
  container=$(docker inspect -f '{{.Status.ContainerStatus.ContainerID}}' "$victim")
  docker -H "$manager" kill "$container" >/dev/null 2>&1 || docker -H "$worker" kill "$container" >/dev/null
  echo "swarm/run: killed shard $KILL's container" >&2
fi

# Until every task has ended, or the deadline (counted from the start instant).
end=$(( $(date -d "$start_at" +%s) + deadline ))
while :; do
  running=$(tasks | awk '$4 !~ /^(complete|failed|rejected|shutdown|orphaned|remove)$/ {n++} END {print n + 0}')
  [ "$running" -eq 0 ] && break
  if [ "$(date +%s)" -ge "$end" ]; then
    echo "swarm/run: $running task(s) still not ended ${deadline} s after the start" >&2
    break
  fi
  sleep 2
done

# LOCAL: what the mock counted, by route (its chat requests: the shards' measured and warm-up).
[ -n "${LOCAL:-}" ] && shards_mock_count "$mock_port" "$out"

# Each slot's log; a shard without a result is named with what Swarm says of its task.
for slot in $(seq 1 "$shards"); do
  shard=$((slot - 1))
  lines=$(tasks | awk -v slot="$slot" '$1 == slot')
  count=$(printf '%s\n' "$lines" | grep -c . || true)
  if [ "$count" -eq 0 ]; then
    shards_absent "$shard" "no task was ever created for slot $slot"
    continue
  fi
  if [ "$count" -gt 1 ]; then
    echo "swarm/run: slot $slot has $count tasks (a restarted task); only a result written before the start could count" >&2
  fi
  : >"$out/shard-$shard.log"
  why=""
  while read -r _ id _ state code err; do
    docker service logs --raw --no-trunc "$id" >>"$out/shard-$shard.log" 2>&1 || true
    case $state in
      complete | failed) why="task $state, exit $code" ;;
      *) why="task still $state when the run's deadline passed (never started or never ended)" ;;
    esac
    [ -n "$err" ] && why="$why: $err"
  done <<<"$lines"
  if ! shards_has_result "$out/shard-$shard.log"; then
    last=$(grep -v '^\s*$' "$out/shard-$shard.log" | tail -n 1 || true)
    [ -n "$last" ] && why="$why; its log ends: $last"
    shards_absent "$shard" "$why"
  fi
done

code=0
shards_merge "$LOADGEN" "$out" "$shards" "${merge_flags[@]}" || code=$?
echo "$out/merged.json"
exit "$code"
