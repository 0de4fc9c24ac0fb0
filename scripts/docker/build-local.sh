#!/usr/bin/env bash
# Builds gatebench/mock-upstream:local and gatebench/loadgen:local from this checkout's release
# build, for machines whose Docker cannot pull base images (scripts/docker/Dockerfile.local):
# each image is FROM scratch with the stripped binary, the shared libraries `ldd` names, the
# dynamic loader, /etc/passwd and /etc/group for the non-root user 65532, and for loadgen the
# system's trusted certificates.
#
# Usage: scripts/docker/build-local.sh   (TAG=local)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tag=${TAG:-local}
. "$root/scripts/lib/tools.sh"
require_tool build-local docker
. "$root/scripts/lib/build.sh"
build_release -p mock-upstream -p loadgen
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT

# assemble BINARY DIR: the binary and what it links, under DIR.
assemble() {
  local binary=$1 dir=$2
  mkdir -p "$dir/usr/local/bin" "$dir/etc" "$dir/home/nonroot" "$dir/tmp"
  cp "$binary" "$dir/usr/local/bin/"
  strip "$dir/usr/local/bin/$(basename "$binary")"
  # Every library by its path, and the loader (the line without "=>").
  ldd "$binary" | awk '/=> \// {print $3} /^[ \t]*\/.*ld-linux/ {print $1}' | while read -r lib; do
    mkdir -p "$dir$(dirname "$lib")"
    cp -L "$lib" "$dir$lib"
  done
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dir/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$dir/etc/group"
  chmod 1777 "$dir/tmp"
  chown -R 65532:65532 "$dir/home/nonroot"
}
assemble "$root/target/release/mock-upstream" "$context/mock-root"
assemble "$root/target/release/loadgen" "$context/loadgen-root"
# loadgen trusts the system's certificates for https:// targets (without --cacert).
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  mkdir -p "$context/loadgen-root/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$context/loadgen-root/etc/ssl/certs/"
fi
cp "$root/scripts/docker/Dockerfile.local" "$context/Dockerfile"
docker build -q --target mock -t "gatebench/mock-upstream:$tag" "$context" >/dev/null
docker build -q --target loadgen -t "gatebench/loadgen:$tag" "$context" >/dev/null
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep "^gatebench/.*:$tag "
