#!/usr/bin/env bash
# Makes sure the ClickHouse that the analytics contract suite and the usage
# benchmarks use answers on 127.0.0.1:8123. Idempotent: CI (.ci/run) calls it
# on every run, and it does nothing when the server already answers.
# Prints one line with the outcome; exits non-zero if the server never answers.
set -uo pipefail

PING_URL="${CLICKHOUSE_PING_URL:-http://127.0.0.1:8123/ping}"
CONFIG="${CLICKHOUSE_CONFIG:-/etc/clickhouse-server/config.xml}"
WAIT_SECONDS="${CLICKHOUSE_WAIT_SECONDS:-60}"

answers() {
  [ "$(curl -s --max-time 2 "$PING_URL" 2>/dev/null)" = "Ok." ]
}

if answers; then
  echo "clickhouse: already answering at $PING_URL"
  exit 0
fi

how=""
# The Debian package ships an init script that drops to the clickhouse user itself.
if command -v service >/dev/null 2>&1 && service clickhouse-server start >/dev/null 2>&1; then
  how="service clickhouse-server start"
else
  server="$(command -v clickhouse-server || true)"
  # The real path: a link in a directory the clickhouse user cannot read would fail after the user switch.
  [ -n "$server" ] && server="$(readlink -f "$server")"
  if [ -z "$server" ]; then
    echo "clickhouse: not answering at $PING_URL and no clickhouse-server binary found" >&2
    exit 1
  fi
  # Without an init system: run the packaged config as the clickhouse user
  # (the data directory belongs to it), detached from this shell.
  log_dir=/var/log/clickhouse-server
  mkdir -p "$log_dir"
  run_as=()
  if [ "$(id -u)" = "0" ] && id clickhouse >/dev/null 2>&1; then
    chown clickhouse:clickhouse "$log_dir" 2>/dev/null || true
    if command -v runuser >/dev/null 2>&1; then
      run_as=(runuser -u clickhouse --)
    else
      run_as=(setpriv --reuid=clickhouse --regid=clickhouse --init-groups)
    fi
  fi
  (cd / && setsid "${run_as[@]}" "$server" --config-file="$CONFIG" </dev/null >>"$log_dir/stdout.log" 2>&1 &)
  how="$server --config-file=$CONFIG (daemonised${run_as:+ as clickhouse})"
fi

for ((i = 0; i < WAIT_SECONDS * 2; i++)); do
  if answers; then
    echo "clickhouse: started with '$how', answering at $PING_URL after $(((i + 1) / 2)) s"
    exit 0
  fi
  sleep 0.5
done
echo "clickhouse: started with '$how' but $PING_URL did not answer within ${WAIT_SECONDS} s" >&2
exit 1
