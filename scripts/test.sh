#!/usr/bin/env bash
# The project's test command: formatting, lints, and every test of the workspace, closing with
# one line that sums the test results of every test binary. On a fresh machine it first installs
# what the tests need: rustfmt and clippy, and the official OpenAI, Anthropic, google-genai and
# boto3 Python SDKs that
# judge the mock's wire formats, HdrHistogram's Python library that reads loadgen's interval logs,
# kubernetes-validate (the Kubernetes API's schemas, for scripts/k8s), libfaketime (Debian's
# faketime), perf (Debian's linux-perf, which `loadgen profile` runs), bpftrace (which
# `loadgen profile --memory` runs) and the openai npm
# package (skipped when GATEBENCH_SKIP_SDK is set), docker.io and docker-compose (a daemon is
# started when none answers), Prometheus, and Slurm with munge. Last, the container images are
# built and run (scripts/docker/check.sh), four shards run on a two-node swarm of the check's
# own (scripts/swarm/check.sh) and on a one-node Slurm of its own (scripts/slurm/check.sh),
# each skipped with the reason where its engine cannot start.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add rustfmt clippy
fi
# apt_install PACKAGE...: from the Debian archive, refreshing its index first when it is stale.
apt_install() {
  apt-get install -y -qq "$@" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$@" >/dev/null; }
}
if [ -z "${GATEBENCH_SKIP_SDK:-}" ] && ! python3 -c "import openai, anthropic, google.genai, boto3, hdrh, kubernetes_validate" 2>/dev/null; then
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  packages=(openai anthropic google-genai boto3 hdrhistogram kubernetes-validate)
  pip=(python3 -m pip install --quiet --disable-pip-version-check)
  # A Debian python refuses system-wide installs (PEP 668) unless told.
  "${pip[@]}" "${packages[@]}" 2>/dev/null || "${pip[@]}" --break-system-packages "${packages[@]}"
fi
# libfaketime shifts one loadgen shard's wall clock in a test of --clock-ref.
if [ -z "${GATEBENCH_SKIP_SDK:-}" ] && ! ls /usr/lib/*/faketime/libfaketimeMT.so.1 >/dev/null 2>&1; then
  apt_install faketime
fi
# perf samples a forwarder in the profile tests (where the kernel does not allow it, they check
# that the run says why).
if [ -z "${GATEBENCH_SKIP_SDK:-}" ] && ! perf --version >/dev/null 2>&1; then
  apt_install linux-perf
fi
# bpftrace counts the C allocator's calls in the `profile --memory` tests (where the kernel does
# not allow it, they check that the run says why); cc builds the test's C server.
if [ -z "${GATEBENCH_SKIP_SDK:-}" ] && ! command -v bpftrace >/dev/null 2>&1; then
  apt_install bpftrace
fi
if ! command -v cc >/dev/null 2>&1; then
  apt_install gcc
fi
# Docker runs the container check and the swarm of shards; Prometheus scrapes shards in a test.
if [ -z "${GATEBENCH_SKIP_SDK:-}" ]; then
  command -v dockerd >/dev/null 2>&1 && command -v docker-compose >/dev/null 2>&1 \
    || apt_install docker.io docker-compose || true
  command -v prometheus >/dev/null 2>&1 || apt_install prometheus || true
  command -v slurmctld >/dev/null 2>&1 || apt_install slurm-wlm munge || true
  if command -v dockerd >/dev/null 2>&1 && ! docker info >/dev/null 2>&1; then
    # Started for this run and left to end with the machine; its log beside the others.
    nohup dockerd >/tmp/gatebench-dockerd.log 2>&1 &
    for _ in $(seq 100); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
  fi
fi
# The openai npm package judges one streaming case (tests/sdk-node, versions locked).
if [ -z "${GATEBENCH_SKIP_SDK:-}" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
  fi
  if [ ! -d tests/sdk-node/node_modules/openai ]; then
    npm ci --prefix tests/sdk-node --no-audit --no-fund --silent
  fi
fi
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Every test of the workspace, and every binary even after one fails (the closing line counts
# them all). The gate asserts what the code decides and what physics guarantees, so it runs
# beside anything; the machine's precision is scripts/precision.sh's (GATEBENCH_PRECISION=1).
cargo test --workspace --no-fail-fast 2>&1 | tee "$log"
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
# The container images, run for real where a Docker daemon answers, and shards on a swarm of
# two daemons of the check's own and on a Slurm of its own (each skipped with the reason
# otherwise).
scripts/docker/check.sh
scripts/swarm/check.sh
scripts/slurm/check.sh
