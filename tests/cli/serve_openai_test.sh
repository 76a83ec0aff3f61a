#!/usr/bin/env bash
# hetero serve through the official `openai` npm client (openai_client_test.cjs).
# The client is installed at test time into CLIENT_DIR; without a reachable
# npm registry the test is skipped (exit 77).
# Usage: serve_openai_test.sh HETERO_BINARY CLIENT_DIR
set -uo pipefail
hetero="$1"
client_dir="$2"
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "SKIP: node and npm are needed (Debian: apt-get install nodejs npm)"; exit 77
fi
mkdir -p "$client_dir" && client_dir="$(cd "$client_dir" && pwd)"
# A package root of its own, so that npm installs here and not in a parent.
[[ -f "$client_dir/package.json" ]] || echo '{"private": true}' >"$client_dir/package.json"
if ! (cd "$client_dir" && timeout 180 npm install --no-save --no-audit --no-fund --loglevel=error openai >npm.log 2>&1); then
  echo "SKIP: npm could not install the openai package (registry unreachable?):"; tail -5 "$client_dir/npm.log"; exit 77
fi
echo "openai npm client $(node -p "require('$client_dir/node_modules/openai/package.json').version")"
tmp=$(mktemp -d)
server_pid=""
trap '[[ -n "$server_pid" ]] && kill -KILL "$server_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
source "$here/serve_lib.sh"
# stories15M's shape with random weights: slow enough that a stream to the
# full context is still running when the client aborts it.
"$hetero" gen-model "$tmp/model.gguf" --shape stories15m --type q8_0 2>/dev/null || { echo "gen-model failed"; exit 1; }
key="hetero-test-$RANDOM$RANDOM"
# A tool-calling template, for the tool-call round trip.
start_server "$tmp/server.log" -m "$tmp/model.gguf" --api-key "$key" -c 2048 --chat-template "$here/../chat/templates/qwen2_5_tools.jinja" || exit 1
node "$here/openai_client_test.cjs" "$client_dir" "$base" random "$key"; rc=$?
stop_server || { echo "FAIL the server did not stop cleanly"; rc=1; }
server_pid=""
if [[ $rc != 0 ]]; then echo "server log:"; tail -20 "$tmp/server.log"; fi
exit $rc
