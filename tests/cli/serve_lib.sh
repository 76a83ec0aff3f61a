# Shared by the server tests: start `hetero serve` on a free port, wait for it,
# stop it. Needs $hetero and $tmp; sets $server_pid, $port, $base.
start_server() {  # start_server LOGFILE ARGS...
  local log="$1"; shift
  "$hetero" serve --providers cpu --port 0 -q "$@" 2>"$log" &
  server_pid=$!
  port=""
  for _ in $(seq 1 600); do
    port=$(sed -n 's#.*on http://[^:]*:\([0-9][0-9]*\) .*#\1#p' "$log" | head -1)
    [[ -n "$port" ]] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z "$port" ]]; then echo "the server did not start:"; cat "$log"; return 1; fi
  base="http://127.0.0.1:$port"
  echo "server pid $server_pid on port $port" >&2
}
stop_server() {  # SIGTERM; returns the exit status
  kill -TERM "$server_pid" 2>/dev/null
  local rc=0
  wait "$server_pid" || rc=$?
  return $rc
}
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$server_pid/status"; }
