#!/usr/bin/env bash
# Runs the preset as N loadgen shards on a Kubernetes cluster and merges their results.
#
#   scripts/k8s/run.sh [SHARDS]        # default 4
#
# Applies the preset ConfigMap and the gateway (with the mock sidecar), waits for the gateway,
# creates the Indexed Job with START_AT = now + LEAD seconds (by this machine's clock; the
# shards start by their nodes' clocks, so those must be synchronised), waits for every shard,
# saves each pod's log as OUT/shard-I.log (I its completion index) and merges them into
# OUT/merged.json, naming every shard without a result (its pod failed, or never ran), as
# scripts/swarm/run.sh and scripts/slurm/run.sh do (scripts/lib/shards.sh).
#
# Settings: NAMESPACE (default: kubectl's current one), LEAD (seconds, default 60: enough for
# every shard's image to be pulled and its pod started), OUT (default k8s-results), LOADGEN
# (the loadgen binary that merges, default `loadgen` on PATH).
set -euo pipefail
cd "$(dirname "$0")"
. ../lib/shards.sh

# The Job for SHARDS shards starting at START_AT (also `run.sh --render SHARDS START_AT`, which
# prints it and does nothing else).
render() {
  sed -E -e "s/__START_AT__/$2/" -e "s/[0-9]+(\s*# shards)\$/$1\1/" loadgen-job.yaml
}
if [ "${1:-}" = "--render" ]; then
  render "${2:?shards}" "${3:?start instant}"
  exit 0
fi

shards=${1:-4}
lead=${LEAD:-60}
out=${OUT:-k8s-results}
loadgen=${LOADGEN:-loadgen}
kubectl=(kubectl ${NAMESPACE:+--namespace "$NAMESPACE"})
job=gatebench-loadgen

"${kubectl[@]}" apply -f preset.yaml -f gateway.yaml
"${kubectl[@]}" rollout status deployment/gateway --timeout=300s
"${kubectl[@]}" delete job "$job" --ignore-not-found --wait=true

start_at=$(date -u -d "+${lead} seconds" +%Y-%m-%dT%H:%M:%SZ)
render "$shards" "$start_at" | "${kubectl[@]}" create -f -
echo "shards: ${shards}, starting at ${start_at}"

# Every shard ends, passed (valid) or failed (invalid, or refused): wait for all of them.
while :; do
  done_count=$("${kubectl[@]}" get job "$job" \
    -o jsonpath='{.status.succeeded} {.status.failed}' | awk '{ print $1 + $2 }')
  [ "${done_count:-0}" -ge "$shards" ] && break
  if "${kubectl[@]}" get job "$job" -o jsonpath='{.status.conditions[*].type}' | grep -q Failed; then
    break
  fi
  sleep 5
done

mkdir -p "$out"
rm -f "$out"/shard-*.log "$out/merged.json" "$out/merged.md"
read -r -a merge_flags <<<"${MERGE_FLAGS:-}"
# Each completion index's pod (name, index, phase), its log as shard-I.log.
pods=$("${kubectl[@]}" get pods -l "job-name=${job}" -o \
  jsonpath='{range .items[*]}{.metadata.name} {.metadata.annotations.batch\.kubernetes\.io/job-completion-index} {.status.phase}{"\n"}{end}')
for i in $(seq 0 $((shards - 1))); do
  line=$(awk -v i="$i" '$2 == i' <<<"$pods" | head -n 1)
  if [ -z "$line" ]; then
    shards_absent "$i" "no pod ran for completion index $i"
    continue
  fi
  read -r pod _ phase <<<"$line"
  "${kubectl[@]}" logs "$pod" >"$out/shard-$i.log" 2>&1 || true
  shards_has_result "$out/shard-$i.log" \
    || shards_absent "$i" "pod $pod $phase; its log ends: $(tail -n 1 "$out/shard-$i.log")"
done
code=0
shards_merge "$loadgen" "$out" "$shards" "${merge_flags[@]}" || code=$?
echo "$out/merged.json"
exit "$code"
