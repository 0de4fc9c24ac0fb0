# Shared by the scripts: the tools a script runs, checked (or installed) before it starts, each
# named with how to install it.
#   require_tool SCRIPT_NAME TOOL...   exits 2 at the first TOOL not on PATH, saying how to
#                                      install it
#   install_tool TOOL...               installs each TOOL not on PATH (Debian package or cargo
#                                      crate; apt needs root)
#   install_hint TOOL                  the command that installs TOOL
#   skip_check NAME VARIABLE WHY       ends a check that cannot run here: skipped (exit 0), or
#                                      failed (exit 1) where VARIABLE is 0

# tool_source TOOL: where TOOL comes from, "apt PACKAGE" or "cargo CRATE" (a tool not named
# here is the Debian package of its own name).
tool_source() {
  case $1 in
    oha | cargo-fuzz) echo "cargo $1" ;;
    taskset | chrt) echo "apt util-linux" ;;
    h2load) echo "apt nghttp2-client" ;;
    perf) echo "apt linux-perf" ;;
    valgrind | callgrind_annotate) echo "apt valgrind" ;;
    node) echo "apt nodejs" ;;
    docker) echo "apt docker.io" ;;
    *) echo "apt $1" ;;
  esac
}

# install_hint TOOL: "apt-get install PACKAGE" or "cargo install CRATE --locked".
install_hint() {
  local from what
  read -r from what <<<"$(tool_source "$1")"
  case $from in
    cargo) echo "cargo install $what --locked" ;;
    *) echo "apt-get install $what" ;;
  esac
}

# require_tool SCRIPT_NAME TOOL...: every TOOL must be on PATH; the first that is not ends the
# script (exit 2) with "SCRIPT_NAME: TOOL not found (HOW TO INSTALL IT)".
require_tool() {
  local name=$1 tool
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$name: $tool not found ($(install_hint "$tool"))" >&2; exit 2; }
  done
}

# install_tool TOOL...: installs each TOOL that is not on PATH, from the Debian archive
# (apt-get, quietly) or with cargo install --locked, saying which on standard error.
install_tool() {
  local tool from what
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 && continue
    read -r from what <<<"$(tool_source "$tool")"
    echo "installing $what ($from)" >&2
    case $from in
      cargo) cargo install --locked "$what" ;;
      *) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$what" >/dev/null ;;
    esac
  done
}

# skip_check NAME VARIABLE WHY: ends the check NAME, which cannot run here, with "NAME check
# skipped: WHY" (exit 0); where the variable VARIABLE is 0, with "NAME check: WHY" on standard
# error (exit 1), for a machine that must run it.
skip_check() {
  local name=$1 variable=$2 why=$3
  if [ "${!variable:-1}" = 0 ]; then
    echo "$name check: $why" >&2
    exit 1
  fi
  echo "$name check skipped: $why"
  exit 0
}
