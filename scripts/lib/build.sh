# Shared by the scripts that run this checkout's binaries: the release build they need.
#   build_release CARGO_BUILD_ARGUMENT...
# The binaries are then under target/release of the workspace (examples under
# target/release/examples).

gatebench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# build_release CARGO_BUILD_ARGUMENT...: `cargo build --release -q ARGUMENT...` in the
# workspace root, e.g. build_release -p loadgen --bin loadgen; fails as cargo does.
build_release() {
  (cd "$gatebench_root" && cargo build --release -q "$@")
}
