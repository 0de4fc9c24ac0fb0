#!/usr/bin/env bash
# Shards on a real Slurm, checked: `LOCAL=1 scripts/slurm/run.sh 4` (munged, slurmctld and
# slurmd of its own; a mock on 127.0.0.1), then
#   1. the merged requests, answers and failures are the sum of the four shards', and the mock
#      counted exactly the chat requests they sent (measured and warm-up);
#   2. with KILL=2 (shard 2's task killed half-way), the merged result names shard 2 as absent
#      with its task's state, is marked invalid, and merges the other three.
# Skipped, with the reason and exit 0, where Slurm's packages are not installed
# (SKIP_SLURM_CHECK=0 makes that a failure instead). Each run is bounded by a timeout.
#
# Usage: scripts/slurm/check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/tools.sh"
skip() { skip_check slurm SKIP_SLURM_CHECK "$1"; }
for tool in munged slurmctld slurmd sbatch; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (apt-get install slurm-wlm munge)"
done
[ -r /etc/munge/munge.key ] || skip "munge has no key (/etc/munge/munge.key)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Built before the timed runs, so a build never counts against their timeout.
. "$root/scripts/lib/build.sh"
build_release -p mock-upstream -p loadgen
for case in whole killed; do
  kill=()
  [ "$case" = killed ] && kill=(KILL=2)
  code=0
  env OUT="$work/$case" MOCK_PORT=18483 LOCAL=1 "${kill[@]}" timeout 180 "$root/scripts/slurm/run.sh" 4 \
    >"$work/$case.out" 2>"$work/$case.err" || code=$?
  if [ "$code" != 0 ] && [ "$code" != 1 ]; then
    cat "$work/$case.err" >&2
    echo "slurm check FAILED: run.sh ($case) exit $code" >&2
    exit 1
  fi
done
python3 "$root/scripts/lib/shards_check.py" slurm "$work/whole" "$work/killed" 2 4
