# Shared by the bench scripts: loopback ports that must be free before a server starts on them
# (a server left there would answer in its place, with other settings), and waiting until one
# answers.
#   require_free_ports SCRIPT_NAME PORT...
#   wait_answers [CURL_OPTION...] URL [TRIES [INTERVAL]]

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

# wait_answers [CURL_OPTION...] URL [TRIES [INTERVAL]]: returns 0 as soon as
# `curl -s -o /dev/null CURL_OPTION... URL` succeeds, 1 once it has failed TRIES times, INTERVAL
# seconds apart (default 100 times 0.05 s: 5 s). Options go before the URL: -k for a
# self-signed certificate, -f to count an HTTP error status as no answer.
wait_answers() {
  local options=()
  while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
    options+=("$1")
    shift
  done
  local url=$1 tries=${2:-100} interval=${3:-0.05}
  for _ in $(seq "$tries"); do
    curl -s -o /dev/null "${options[@]}" "$url" && return 0
    sleep "$interval"
  done
  return 1
}
