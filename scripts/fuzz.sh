#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ for a bounded time with cargo fuzz (libFuzzer): the mock's
# request handling over a real connection, the mock's settings, loadgen's response parsing.
# New corpus entries go to bench-out/fuzz/corpus (the seeds in fuzz/corpus stay as they are);
# an input that crashes a target is copied to fuzz/regressions/TARGET/, where the test suite
# replays it (mock-upstream/tests/fuzz_regressions.rs, loadgen/tests/fuzz_regressions.rs).
#
# Usage: scripts/fuzz.sh [TARGET...]   (FUZZ_SECONDS=60 per target; SANITIZER=address|none)
#
# cargo fuzz passes unstable rustc flags; on a stable toolchain RUSTC_BOOTSTRAP=1 lets it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"
seconds=${FUZZ_SECONDS:-60}
sanitizer=${SANITIZER:-address}
. "$root/scripts/lib/tools.sh"
install_tool cargo-fuzz
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(mock_request mock_settings loadgen_response)
export RUSTC_BOOTSTRAP=1
failed=()
for target in "${targets[@]}"; do
  work="$root/bench-out/fuzz/corpus/$target"
  mkdir -p "$work" "$root/fuzz/regressions/$target"
  echo "== fuzz $target for ${seconds}s (sanitizer $sanitizer)" >&2
  if ! cargo fuzz run --sanitizer "$sanitizer" "$target" "$work" "corpus/$target" -- \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1; then
    failed+=("$target")
  fi
  # Crash, timeout and out-of-memory inputs, kept for the regression tests.
  for input in artifacts/"$target"/crash-* artifacts/"$target"/oom-* artifacts/"$target"/timeout-*; do
    [ -e "$input" ] && cp "$input" "$root/fuzz/regressions/$target/"
  done
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]}; inputs in fuzz/regressions/" >&2
  exit 1
fi
echo "fuzz: no crash in ${targets[*]}" >&2
