#!/usr/bin/env bash
# Runs the profile as N loadgen shards on a Kubernetes cluster and merges their results.
#
#   scripts/k8s/run.sh [SHARDS]        # default 4
#
# Applies the profile ConfigMap and the gateway (with the mock sidecar), waits for the gateway,
# creates the Indexed Job with START_AT = now + LEAD seconds (by this machine's clock; the
# shards start by their nodes' clocks, so those must be synchronised), waits for every shard,
# saves each pod's log as OUT/POD.log and merges them into OUT/merged.json.
#
# Settings: NAMESPACE (default: kubectl's current one), LEAD (seconds, default 60: enough for
# every shard's image to be pulled and its pod started), OUT (default k8s-results), LOADGEN
# (the loadgen binary that merges, default `loadgen` on PATH).
set -euo pipefail
cd "$(dirname "$0")"

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

"${kubectl[@]}" apply -f profile.yaml -f gateway.yaml
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
logs=()
for pod in $("${kubectl[@]}" get pods -l "job-name=${job}" -o name); do
  log="${out}/${pod#pod/}.log"
  "${kubectl[@]}" logs "$pod" > "$log"
  logs+=("$log")
done
"$loadgen" merge "${logs[@]}" --out "${out}/merged.json" | tee "${out}/merged.md"
