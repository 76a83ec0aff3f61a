#!/usr/bin/env bash
# Plugins that fail after loading. A crash in execute or compile is contained:
# the command runs again without the plugin and gives the text cpu alone
# gives; later runs skip the quarantined plugin until its file changes or
# --retry-crashed. --verify names a provider whose logits are wrong.
# Usage: plugin_faults_test.sh HETERO_BINARY
set -uo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 HETERO_BINARY" >&2
  exit 2
fi
hetero="$1"
build="$(dirname "$hetero")/.."
source "$(dirname "$0")/check_lib.sh"
prompt="Once upon a time"

"$hetero" run --providers cpu -p "$prompt" -n 16 --temp 0 -q >"$tmp/cpu_text" 2>"$tmp/cpu_err" || { cat "$tmp/cpu_err"; exit 1; }
[[ -s "$tmp/cpu_text" ]]; check "cpu alone gives text" $?

lazy="$build/tests/lazy_plugins/libhetero-ep-lazytest.so"
if [[ -f "$lazy" ]]; then
  # A copy of its own: the test touches it.
  mkdir -p "$tmp/plugins" && cp "$lazy" "$tmp/plugins/"
  plugin="$tmp/plugins/libhetero-ep-lazytest.so"
  for where in execute compile; do
    echo "{\"providers\": [{\"name\": \"lazytest\", \"options\": {\"crash_in_$where\": 1, \"estimate\": 1e-9, \"claim_memory\": 8000000000}}, {\"name\": \"cpu\"}]}" >"$tmp/crash_$where.json"
  done
  crash_run() {  # crash_run NAME WHERE [run flags...]: stdout to $tmp/NAME.out, stderr and rc to $tmp/NAME.err
    local name="$1" where="$2"
    shift 2
    XDG_CACHE_HOME="$tmp/cache" HETERO_PLUGIN_PATH="$tmp/plugins" timeout 120 "$hetero" run --config "$tmp/crash_$where.json" \
      -p "$prompt" -n 16 --temp 0 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    echo "rc=$?" >>"$tmp/$name.err"
  }
  same_text() { cmp -s "$tmp/cpu_text" "$tmp/$1.out"; }

  crash_run first execute
  grep -q "rc=0" "$tmp/first.err" && grep -q "provider plugin .*libhetero-ep-lazytest.so crashed (SIGSEGV, an invalid memory access) in execute" "$tmp/first.err" &&
    grep -q "running the command again without it" "$tmp/first.err" &&
    grep -q "^note: provider lazytest left out: it crashed in execute (SIGSEGV) in the previous attempt" "$tmp/first.err" && same_text first
  check "a plugin crashing in its first execute: the run starts again without it, exit 0, cpu's greedy text" $?
  [[ $(ls "$tmp/cache/hetero/plugin-quarantine" 2>/dev/null | wc -l) == 1 ]] && grep -q "^call=execute$" "$tmp/cache/hetero/plugin-quarantine/"*
  check "the crash leaves one quarantine record naming the call" $?

  crash_run second execute
  grep -q "rc=0" "$tmp/second.err" && ! grep -q "crashed (SIG" "$tmp/second.err" &&
    grep -q "^note: provider lazytest left out: quarantined: it crashed in execute (SIGSEGV) on .*--retry-crashed" "$tmp/second.err" && same_text second
  check "the next run skips the quarantined plugin, saying why and how to retry" $?

  touch -d "+2 seconds" "$plugin"
  crash_run touched execute
  grep -q "rc=0" "$tmp/touched.err" && grep -q "was quarantined .*the file has changed since: trying it again" "$tmp/touched.err" &&
    grep -q "crashed (SIGSEGV, an invalid memory access) in execute" "$tmp/touched.err" && same_text touched
  check "a changed plugin file is tried again (and crashes, and is contained again)" $?

  crash_run retried execute --retry-crashed
  grep -q "rc=0" "$tmp/retried.err" && grep -q "was quarantined .*--retry-crashed: trying it again" "$tmp/retried.err" &&
    grep -q "crashed (SIGSEGV, an invalid memory access) in execute" "$tmp/retried.err" && same_text retried
  check "--retry-crashed tries a quarantined plugin again" $?

  rm -rf "$tmp/cache"
  crash_run compile compile
  grep -q "rc=0" "$tmp/compile.err" && grep -q "crashed (SIGSEGV, an invalid memory access) in compile" "$tmp/compile.err" &&
    grep -q "^note: provider lazytest left out: it crashed in compile (SIGSEGV) in the previous attempt" "$tmp/compile.err" && same_text compile
  check "a plugin crashing in compile is contained the same way" $?

  # Two restarts already behind it: a third crash ends the process, never a loop.
  rm -rf "$tmp/cache"
  HETERO_CRASHED_PLUGINS=$'SIGSEGV execute /gone/libhetero-ep-a.so\nSIGSEGV compile /gone/libhetero-ep-b.so' crash_run guard execute
  grep -q "rc=139" "$tmp/guard.err" && grep -q "crashed (SIGSEGV, an invalid memory access) in execute; quarantined" "$tmp/guard.err" &&
    ! grep -q "running the command again" "$tmp/guard.err"
  check "after 2 restarts a crash ends the process with the signal (quarantined still)" $?

  # No cache dir: nothing is recorded, the restart still leaves the plugin out.
  env -u XDG_CACHE_HOME -u HOME HETERO_PLUGIN_PATH="$tmp/plugins" timeout 120 "$hetero" run --config "$tmp/crash_execute.json" \
    -p "$prompt" -n 16 --temp 0 >"$tmp/nocache.out" 2>"$tmp/nocache.err"; rc=$?
  [[ $rc == 0 ]] && grep -q "left out: it crashed in execute (SIGSEGV) in the previous attempt" "$tmp/nocache.err" &&
    ! grep -q "quarantined" "$tmp/nocache.err" && same_text nocache
  check "with no cache dir the crash is still contained, and nothing is quarantined" $?

  # A command that does not restart (providers) still names and quarantines it.
  rm -rf "$tmp/cache"
  echo '{"providers": [{"name": "lazytest", "options": {"crash_outside_probe": 1}}, {"name": "cpu"}]}' >"$tmp/query.json"
  XDG_CACHE_HOME="$tmp/cache" HETERO_PLUGIN_PATH="$tmp/plugins" timeout 60 "$hetero" providers --config "$tmp/query.json" >/dev/null 2>"$tmp/query.err"; rc=$?
  [[ $rc == 139 ]] && grep -q "crashed (SIGSEGV, an invalid memory access) in a device query; quarantined" "$tmp/query.err"
  check "providers: a crash in a device query is named and quarantined, the process ends" $?
fi

# --verify: the conformance kit's selftest provider computes with the scalar
# reference; fault=rope_wrong_pairs rotates the wrong pairs (the text goes wrong within 16 tokens).
selftest="$build/tests/conformance/selftest"
if [[ -f "$selftest/libhetero-ep-selftest.so" ]]; then
  for fault in none rope_wrong_pairs; do
    echo "{\"providers\": [{\"name\": \"selftest\", \"options\": {\"fault\": \"$fault\"}}, {\"name\": \"cpu\"}], \"plan\": {\"pin\": [{\"layers\": \"all\", \"device\": \"selftest:0\"}, {\"layers\": \"head\", \"device\": \"selftest:0\"}]}}" >"$tmp/selftest_$fault.json"
  done
  verify_run() {  # verify_run NAME FAULT [flags...]
    local name="$1" fault="$2"
    shift 2
    HETERO_PLUGIN_PATH="$selftest" timeout 120 "$hetero" run --config "$tmp/selftest_$fault.json" -p "$prompt" -n 16 --temp 0 "$@" \
      >"$tmp/$name.out" 2>"$tmp/$name.err"
    echo "rc=$?" >>"$tmp/$name.err"
  }
  verify_run wrong_unchecked rope_wrong_pairs
  grep -q "rc=0" "$tmp/wrong_unchecked.err" && ! grep -q "^verify:" "$tmp/wrong_unchecked.err" && ! cmp -s "$tmp/cpu_text" "$tmp/wrong_unchecked.out"
  check "without --verify a provider with wrong results runs to the end (it cannot know)" $?
  verify_run wrong_checked rope_wrong_pairs --verify 1
  grep -q "rc=0" "$tmp/wrong_checked.err" &&
    grep -qE "^verify: step 1: logits of selftest:0 differ from the reference cpu:0 by [0-9.e+-]+ at most \(top token at most 1 nat" "$tmp/wrong_checked.err" &&
    grep -qE "^verify: cost: [0-9]+ of [0-9]+ decode steps checked, [0-9]+ tokens evaluated again on cpu:0 in [0-9.]+ ms" "$tmp/wrong_checked.err"
  check "--verify 1 names the provider with wrong results at the step it was caught, and prints the cost" $?
  verify_run right_checked none --verify 1
  grep -q "rc=0" "$tmp/right_checked.err" && grep -qE "^verify: [1-9][0-9]* spot checks against cpu:0, all agreed" "$tmp/right_checked.err" &&
    grep -qE "^verify: cost: ([0-9]+) of \1 decode steps checked" "$tmp/right_checked.err" && cmp -s "$tmp/cpu_text" "$tmp/right_checked.out"
  check "--verify 1 passes a correct provider with cpu's text" $?
fi
exit $fail
