# Shared by the runners that start loadgen shards on a cluster engine (scripts/swarm/run.sh,
# scripts/slurm/run.sh, scripts/k8s/run.sh): one contract for all three.
#   - Entry point: the loadgen binary (or image) runs `loadgen run --preset FILE --out -` with
#     its shard, start instant and metrics address in the environment: LOADGEN_SHARD (`I/N`, or
#     `slot:S/N` counting from 1 as Docker Swarm's task slots do), LOADGEN_START_AT (RFC 3339,
#     UTC) and LOADGEN_METRICS_LISTEN (`HOST:PORT+shard`: the port plus the shard's index).
#   - Collection: each shard's log (its result as one JSON line, its report beside it) saved as
#     OUT/shard-I.log.
#   - Merge: `loadgen merge` over the logs that hold a result; a shard without one is named
#     with the runner's reason (`--partial --absent I:WHY`), never sent again.
#
#   shards_local_mock ROOT PORT WORK
#                                  LOCAL=1's target: starts this checkout's mock on 127.0.0.1:PORT
#                                  (mock_pid), writes WORK/local.toml (scripts/swarm/local.toml
#                                  aimed at it); fails when it does not answer
#   shards_mock_count PORT OUT     writes the chat requests the mock counted to
#                                  OUT/mock-chat-requests
#   shards_halfway PRESET START_AT  sleeps until half-way through the preset's duration
#                                  after the shards' common start instant
#   shards_start_at LEAD           prints the instant LEAD seconds from now, RFC 3339 in UTC
#   shards_absent I WHY            records why shard I has no result (for shards_merge)
#   shards_merge LOADGEN OUT N [MERGE FLAG...]
#                                  merges OUT/shard-*.log into OUT/merged.json and
#                                  OUT/merged.md (one shard: its result is the merged one);
#                                  returns merge's exit code

shards_absent_flags=()

shards_local_mock() {
  local root=$1 port=$2 work=$3
  "$root/target/release/mock-upstream" --listen "127.0.0.1:$port" >"$work/mock.log" 2>&1 &
  mock_pid=$!
  # shellcheck source=SCRIPTDIR/ports.sh
  . "$root/scripts/lib/ports.sh"
  wait_answers -f "http://127.0.0.1:$port/health" 100 0.05 || {
    echo "the local mock did not start: $(tail -n 3 "$work/mock.log")" >&2
    return 1
  }
  sed "s/__MOCK_PORT__/$port/g" "$root/scripts/swarm/local.toml" >"$work/local.toml"
}

shards_mock_count() {
  curl -s "http://127.0.0.1:$1/metrics" \
    | awk '/^mock_requests_total\{route="chat"\}/ {print $2}' >"$2/mock-chat-requests" || true
}

# However long placing the shards took: counted from START_AT, not from now.
shards_halfway() {
  local seconds wait
  seconds=$(awk -F'"' '/^duration/ {print $2}' "$1" | tr -dc '0-9')
  wait=$(($(date -u -d "$2" +%s) + ${seconds:-10} / 2 - $(date -u +%s)))
  if [ "$wait" -gt 0 ]; then sleep "$wait"; fi
}

shards_start_at() {
  date -u -d "+${1} seconds" +%Y-%m-%dT%H:%M:%SZ
}

# shards_has_result LOG: true when LOG holds a result line.
shards_has_result() {
  grep -q '^{"schema":' "$1" 2>/dev/null
}

shards_absent() {
  shards_absent_flags+=(--absent "$1:$2")
  echo "shard $1: $2" >&2
}

shards_merge() {
  local loadgen=$1 out=$2 count=$3
  shift 3
  local logs=() i
  for i in $(seq 0 $((count - 1))); do
    if shards_has_result "$out/shard-$i.log"; then
      logs+=("$out/shard-$i.log")
    elif ! printf '%s\n' "${shards_absent_flags[@]}" | grep -q "^$i:"; then
      shards_absent "$i" "its log holds no result: $(tail -n 1 "$out/shard-$i.log" 2>/dev/null || echo 'no log')"
    fi
  done
  if [ ${#logs[@]} -eq 0 ]; then
    echo "no shard wrote a result: nothing to merge" >&2
    return 1
  fi
  # One shard is the whole plan: its result is the merged one, and its own verdict (its run's
  # --max-p99 and --max-error-rate) is the run's; merge flags do not apply to it.
  if [ "$count" = 1 ]; then
    grep -m1 '^{"schema":' "${logs[0]}" >"$out/merged.json"
    "$loadgen" report "$out/merged.json" --format markdown >"$out/merged.md" || true
    cat "$out/merged.md"
    python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["valid"] else 1)' "$out/merged.json"
    return
  fi
  local partial=()
  [ ${#shards_absent_flags[@]} -gt 0 ] && partial=(--partial "${shards_absent_flags[@]}")
  local code=0
  "$loadgen" merge "${logs[@]}" "${partial[@]}" "$@" --out "$out/merged.json" >"$out/merged.md" || code=$?
  cat "$out/merged.md"
  return "$code"
}
