#!/usr/bin/env bash
# The Portkey AI gateway (@portkey-ai/gateway, npm) in front of the mock, through its custom-host
# route: requests carry x-portkey-provider: openai and x-portkey-custom-host pointing at the
# mock (the direct calls carry them too; the mock ignores them). Installs the package into
# bench-out/gateways/portkey-install, runs the profiles (scripts/gateways/lib.sh) direct and
# through it, writes results and reports to bench-out/gateways/portkey, and stops what it
# started.
#
# Usage: scripts/gateways/portkey.sh      (PORTKEY_VERSION=1.15.2 DURATION=20s METHODS=...)
#        PROFILE=1 scripts/gateways/portkey.sh   (Node writes /tmp/perf-PID.map of its compiled
#        JavaScript, --perf-basic-prof, so the flame graphs name it; the profile method only)
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
# Started in the scratch folder: V8 writes its isolate log where it runs under --perf-basic-prof.
(cd "$work" && exec taskset -c 1 node "${node_flags[@]}" \
  "$install/node_modules/@portkey-ai/gateway/build/start-server.js" \
  --port="$port" --headless >"$work/portkey.log" 2>&1) &
started+=($!)
wait_answers "http://127.0.0.1:$port/" 200 0.1 || true
extra_args=(--header "x-portkey-provider: openai"
  --header "x-portkey-custom-host: http://127.0.0.1:$mock_port/v1"
  --header "authorization: Bearer sk-gatebench")
run_methods portkey "http://127.0.0.1:$port/v1/chat/completions" \
  "@portkey-ai/gateway $version on Node.js $(node --version), custom host, no logging configured" defaults \
  "${started[-1]}"
