#!/usr/bin/env bash
# The Portkey AI gateway (@portkey-ai/gateway, npm) in front of the mock, through its custom-host
# route: requests carry x-portkey-provider: openai and x-portkey-custom-host pointing at the
# mock (the direct calls carry them too; the mock ignores them). Installs the package into
# bench-out/gateways/portkey-install, runs the presets (scripts/gateways/lib.sh) direct and
# through it, writes results and reports to bench-out/gateways/portkey, and stops what it
# started.
#
# Usage: scripts/gateways/portkey.sh      (PORTKEY_VERSION=1.15.2 DURATION=20s METHODS=...)
#        PROFILE=1 scripts/gateways/portkey.sh   (Node writes /tmp/perf-PID.map of its compiled
#        JavaScript, --perf-basic-prof, so the flame graphs name it; the profile method only)
#        MEMORY=1 scripts/gateways/portkey.sh   (V8's sampling heap profiler in the gateway,
#        node --require scripts/gateways/lib/v8-heap.js, serving its samples on
#        127.0.0.1:18633 for `loadgen profile --memory`; GATEBENCH_V8_SAMPLING_INTERVAL, default
#        32768 bytes, the mean gap between samples. The open-source gateway has no access-log
#        setting: it runs with logging off only)
. "$(dirname "$0")/lib.sh"
install_tool node npm curl
port=18603
version=${PORTKEY_VERSION:-1.15.2}
install="$root/bench-out/gateways/portkey-install"
# The gateway keeps working off what it accepted after a constant-rate trial ends.
SETTLE=${SETTLE:-30s}
build
if [ ! -f "$install/node_modules/@portkey-ai/gateway/package.json" ] ||
  ! grep -q "\"version\": \"$version\"" "$install/node_modules/@portkey-ai/gateway/package.json"; then
  mkdir -p "$install"
  npm install --prefix "$install" --no-audit --no-fund --silent "@portkey-ai/gateway@$version"
fi
start_mock
node_flags=()
[ "${PROFILE:-}" = 1 ] && node_flags=(--perf-basic-prof)
v8_heap_port=18633
heap_info=""
if [ "${MEMORY:-}" = 1 ]; then
  logging_modes no >/dev/null
  node_flags+=(--require "$root/scripts/gateways/lib/v8-heap.js")
  export GATEBENCH_V8_HEAP_PORT=$v8_heap_port
  memory_args=(--memory-source node --memory-url "http://127.0.0.1:$v8_heap_port/")
  heap_info=", V8 sampling heap profiler on (every ${GATEBENCH_V8_SAMPLING_INTERVAL:-32768} bytes)"
fi
# Started in the scratch folder: V8 writes its isolate log where it runs under --perf-basic-prof.
(cd "$work" && exec taskset -c 1 node "${node_flags[@]}" \
  "$install/node_modules/@portkey-ai/gateway/build/start-server.js" \
  --port="$port" --headless >"$work/portkey.log" 2>&1) &
started+=($!)
wait_answers "http://127.0.0.1:$port/" 200 0.1 || true
if [ "${MEMORY:-}" = 1 ] && ! wait_answers -f "http://127.0.0.1:$v8_heap_port/" 50 0.1; then
  echo "portkey: the V8 heap endpoint does not answer on port $v8_heap_port (log: $(tail -3 "$work/portkey.log"))" >&2
  exit 2
fi
extra_args=(--header "x-portkey-provider: openai"
  --header "x-portkey-custom-host: http://127.0.0.1:$mock_port/v1"
  --header "authorization: Bearer sk-gatebench")
run_methods portkey "http://127.0.0.1:$port/v1/chat/completions" \
  "@portkey-ai/gateway $version on Node.js $(node --version), custom host, no logging configured$heap_info" defaults \
  "${started[-1]}"
