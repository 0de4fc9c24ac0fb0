# Shared by the bench scripts: loopback ports that must be free before a server starts on them
# (a server left there would answer in its place, with other settings), and waiting until one
# answers.

# require_free_ports SCRIPT_NAME PORT...: exits 2 naming the first port already in use.
require_free_ports() {
  local name=$1 port
  shift
  for port in "$@"; do
    if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
      echo "$name: port $port is already in use" >&2
      exit 2
    fi
  done
}

# wait_answers URL: returns 0 once URL answers, 1 after 5 s.
wait_answers() {
  for _ in $(seq 100); do
    curl -s -o /dev/null "$1" && return 0
    sleep 0.05
  done
  return 1
}
