#!/usr/bin/env bash
# Runs one preset as N loadgen shards on Slurm (a job array) and merges their results.
#
#   scripts/slurm/run.sh [SHARDS]           # on the cluster sbatch talks to (default 4)
#   LOCAL=1 scripts/slurm/run.sh [SHARDS]   # a one-node Slurm of its own, on this host
#
# Submits scripts/slurm/shards.sbatch as `--array=0-(N-1)`, one shard per array task (its index
# is the shard), every task with the same start instant (now + LEAD) and LOADGEN_METRICS_LISTEN
# (METRICS_HOST:METRICS_PORT+shard: tasks that share a node need ports of their own); tasks are
# never requeued, and one started after the start instant refuses to run, so no shard is sent
# twice. Writes OUT/prometheus-targets.json (each running task's node and port) for Prometheus'
# file_sd, waits until every task has ended or DEADLINE passed (cancelling what is left), reads
# each task's state, merges OUT/shard-I.log (each task's output; OUT must be on a filesystem
# every node shares) into OUT/merged.json naming every shard without a result, and prints its
# path last.
#
# LOCAL=1 starts munged, slurmctld and slurmd of its own (their config, sockets, state and logs
# under a temporary folder, on ports of their own; the node declared with more CPUs than it has,
# so all shards run at once), a mock on 127.0.0.1 as the target and clock reference, runs the
# array, and stops only what it started. Its preset is scripts/swarm/local.toml with the
# mock's address filled in.
#
# Settings: PRESET (PROFILE, its former name, is still read; no default outside LOCAL: a
# preset every node can read), LOADGEN (the
# binary the tasks run and the merge uses, default target/release/loadgen), LEAD (default 10),
# DEADLINE (seconds after the start, default 120), OUT (default slurm-results), METRICS_HOST
# (default 0.0.0.0; LOCAL: 127.0.0.1), METRICS_PORT (default 9600), METRICS_LINGER (how long
# each shard serves its final counts after its run, default 3s), SBATCH_FLAGS (more sbatch
# flags, like --partition=load), MERGE_FLAGS, KEEP=1 (keep the temporary folder and its logs).
# LOCAL only: MOCK_PORT (default 18482), SLURM_PORT (default 16817: slurmctld's; slurmd's is one
# more), KILL=I (shard I's loadgen killed half-way through the run, to see a lost shard named).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/shards.sh"
. "$root/scripts/lib/tools.sh"
require_tool slurm/run sbatch

shards=${1:-4}
lead=${LEAD:-10}
deadline=${DEADLINE:-120}
out=$(mkdir -p "${OUT:-slurm-results}" && cd "${OUT:-slurm-results}" && pwd)
loadgen=${LOADGEN:-$root/target/release/loadgen}
metrics_port=${METRICS_PORT:-9600}
read -r -a sbatch_flags <<<"${SBATCH_FLAGS:-}"
read -r -a merge_flags <<<"${MERGE_FLAGS:-}"
[[ $shards =~ ^[1-9][0-9]*$ ]] && [ "$shards" -ge 2 ] || {
  echo "slurm/run: SHARDS must be a whole number of at least 2, not '$shards'" >&2
  exit 2
}
rm -f "$out"/shard-*.log "$out/merged.json" "$out/merged.md"
work=$(mktemp -d /tmp/gbslurm.XXXXXX)
started_here=()
job=""

cleanup() {
  set +e
  if [ -n "$job" ]; then
    scancel "$job" 2>/dev/null
    # Until the tasks are gone, before the daemons that would end them stop.
    for _ in $(seq 50); do squeue -h -j "$job" 2>/dev/null | grep -q . || break; sleep 0.2; done
  fi
  [ -n "${mock_pid:-}" ] && kill "$mock_pid" 2>/dev/null
  local pid
  for pid in "${started_here[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${started_here[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  [ -n "${KEEP:-}" ] && echo "slurm/run: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "${LOCAL:-}" ]; then
  for tool in munged slurmctld slurmd; do
    command -v "$tool" >/dev/null || {
      echo "slurm/run: LOCAL=1 needs $tool (apt-get install slurm-wlm munge)" >&2
      exit 2
    }
  done
  slurm_port=${SLURM_PORT:-16817}
  mock_port=${MOCK_PORT:-18482}
  . "$root/scripts/lib/ports.sh"
  require_free_ports slurm/run "$mock_port"
  . "$root/scripts/lib/build.sh"
  build_release -p mock-upstream -p loadgen
  host=$(hostname -s)
  mkdir -p "$work/munge" "$work/state" "$work/spool"
  munged --force --socket="$work/munge/munge.sock" --pid-file="$work/munge/munged.pid" \
    --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed" \
    --key-file=/etc/munge/munge.key
  started_here+=("$(cat "$work/munge/munged.pid")")
  cat >"$work/slurm.conf" <<CONF
ClusterName=gatebench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$slurm_port
SlurmdPort=$((slurm_port + 1))
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$((shards * 2)) State=UNKNOWN
PartitionName=shards Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$work/slurm.conf
  slurmctld -D -i >/dev/null 2>&1 &
  started_here+=("$!")
  slurmd -D >/dev/null 2>&1 &
  started_here+=("$!")
  for _ in $(seq 100); do
    sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)' && break
    sleep 0.2
  done
  sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)' || {
    echo "slurm/run: the local Slurm did not come up: $(tail -n 3 "$work/slurmctld.log" "$work/slurmd.log" 2>/dev/null)" >&2
    exit 1
  }
  shards_local_mock "$root" "$mock_port" "$work"
  preset=${PRESET:-${PROFILE:-$work/local.toml}}
  metrics_host=${METRICS_HOST:-127.0.0.1}
else
  preset=${PRESET:-${PROFILE:?slurm/run: PRESET must name a preset every node can read}}
  metrics_host=${METRICS_HOST:-0.0.0.0}
fi

start_at=$(shards_start_at "$lead")
job=$(sbatch --parsable --array="0-$((shards - 1))" --output="$out/shard-%a.log" \
  --export="ALL,LOADGEN=$loadgen,PRESET=$preset,LOADGEN_START_AT=$start_at,LOADGEN_METRICS_LISTEN=$metrics_host:$metrics_port+shard,LOADGEN_METRICS_LINGER=${METRICS_LINGER:-3s}" \
  "${sbatch_flags[@]}" "$root/scripts/slurm/shards.sbatch")
job=${job%%;*}
echo "slurm/run: job $job, $shards shards, starting at $start_at" >&2

# Where every shard's metrics are, once its task runs (array index and node).
for _ in $(seq 300); do
  running=$(squeue -h -r -j "$job" -t RUNNING -o '%K %N' 2>/dev/null | grep -c . || true)
  [ "$running" -ge "$shards" ] && break
  sleep 0.2
done
squeue -h -r -j "$job" -t RUNNING -o '%K %N' 2>/dev/null | python3 -c "
import json, socket, sys
port, host, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
targets = []
for line in sys.stdin:
    index, node = line.split()[:2]
    addr = host if host not in ('0.0.0.0', '::') else socket.gethostbyname(node)
    targets.append({'targets': [f'{addr}:{port + int(index)}'],
                    'labels': {'job': 'loadgen', 'shard': f'{index}/{count}', 'node': node}})
json.dump(targets, open(sys.argv[4], 'w'), indent=1)
" "$metrics_port" "$metrics_host" "$shards" "$out/prometheus-targets.json" || true

# KILL=I (LOCAL only): shard I's loadgen killed half-way through its run, to see a lost shard
# named (found by the LOADGEN_SHARD in its environment).
if [ -n "${KILL:-}" ] && [ -n "${LOCAL:-}" ]; then
  shards_halfway "$preset" "$start_at"
  for pid in $(pgrep -x loadgen); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "LOADGEN_SHARD=$KILL/$shards"; then
      kill -9 "$pid" && echo "slurm/run: killed shard $KILL (pid $pid)" >&2
    fi
  done
fi

end=$(($(date -d "$start_at" +%s) + deadline))
# Until no task of the job is left. A failing squeue is asked again; five failures in a row
# mean the job is gone (squeue refuses the id of a job slurmctld no longer holds).
failures=0
while :; do
  if left=$(squeue -h -r -j "$job" 2>/dev/null); then
    failures=0
    [ -n "$left" ] || break
  else
    failures=$((failures + 1))
    [ "$failures" -ge 5 ] && break
  fi
  if [ "$(date +%s)" -ge "$end" ]; then
    echo "slurm/run: tasks still not ended ${deadline} s after the start: cancelled" >&2
    scancel "$job"
    sleep 2
    break
  fi
  sleep 1
done

# What Slurm says of each task without a result.
for i in $(seq 0 $((shards - 1))); do
  shards_has_result "$out/shard-$i.log" && continue
  state=$(scontrol -o show job "${job}_$i" 2>/dev/null | grep -o 'JobState=[^ ]* .*ExitCode=[^ ]*' \
    | sed -E 's/JobState=([^ ]*).*ExitCode=([^ ]*)/\1, exit \2/' || true)
  last=$(grep -v '^\s*$' "$out/shard-$i.log" 2>/dev/null | tail -n 1 || true)
  shards_absent "$i" "array task ${job}_$i ${state:-unknown to scontrol}${last:+; its log ends: $last}"
done
job=""

code=0
shards_merge "$loadgen" "$out" "$shards" "${merge_flags[@]}" || code=$?
[ -n "${LOCAL:-}" ] && shards_mock_count "$mock_port" "$out"
echo "$out/merged.json"
exit "$code"
