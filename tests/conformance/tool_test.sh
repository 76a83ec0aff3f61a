#!/usr/bin/env bash
# Checks of the hetero-conformance tool itself: its output, exit statuses,
# JUnit file, --model, and that a plugin which exits, crashes or hangs is
# reported as a failure. One check per run, named by $1:
#
#   tool_test.sh CHECK TOOL SELFTEST_PLUGIN HOSTILE_DIR BAD_DIR MODEL
#
# SELFTEST_PLUGIN is tests/conformance's reference provider (fault=... plants
# a bug or a misbehaviour); HOSTILE_DIR and BAD_DIR hold tests/plugins'.
set -u
check=$1 tool=$2 selftest=$3 hostile=$4 bad=$5 model=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAILED ($check): $*"; echo "--- output:"; cat "$tmp/out"; exit 1; }
# run EXPECTED_STATUS ARGS...: runs the tool into $tmp/out, checks the status.
run() {
  local want=$1; shift
  "$tool" "$@" >"$tmp/out" 2>&1
  local rc=$?
  [[ $rc == "$want" ]] || fail "exit status $rc, expected $want (hetero-conformance $*)"
}
has() { grep -qE -- "$1" "$tmp/out" || fail "no line matches '$1'"; }
lacks() { ! grep -qE -- "$1" "$tmp/out" || fail "a line matches '$1'"; }

case $check in
  quiet)
    # One summary line per family, no per-case lines, a table and a verdict.
    run 0 "$selftest"
    families=$("$tool" --list | cut -d/ -f1 | sort -u)
    for f in $families; do
      n=$(grep -cE "^  $f +passed +[0-9]+ +failed +[0-9]+ +skipped +[0-9]+" "$tmp/out")
      [[ $n == 1 ]] || fail "family $f has $n summary lines, expected 1"
      grep -qE "^$f +[0-9]+ +[0-9]+ +[0-9]+$" "$tmp/out" || fail "family $f has no row in the table"
    done
    lacks "^(PASS|SKIP) [a-z_]+/"
    has "^family +passed +failed +skipped$"
    has "^total +[0-9]+ +0 +[0-9]+$"
    has "^PASS: [0-9]+ passed, 0 failed, [0-9]+ skipped \("
    # The provider lacks the newer quant types: the skips name them by dtype.
    has "^  matmul +passed +[0-9]+ +failed +0 +skipped +[1-9][0-9]* \(op_supported said no: .*q4_K"
    ;;
  verbose)
    run 0 "$selftest" -v --filter softmax/
    want=$("$tool" --list --filter softmax/ | wc -l)
    got=$(grep -cE "^PASS softmax/[^ ]+ \[device 0\]: worst " "$tmp/out")
    [[ $want -gt 0 && $got == "$want" ]] || fail "$got per-case lines for $want cases"
    ;;
  junit)
    # A planted fault: failures in the console and in the JUnit file, counts agreeing.
    run 1 "$selftest" --option fault=rmsnorm_mean_bias --junit "$tmp/report.xml"
    has "^FAIL rmsnorm/[^ ]+ \[device 0\]: out\[[0-9,]+\] .*expected .* got .* > bound "
    python3 - "$tmp/report.xml" "$tmp/out" <<'PY' || fail "the JUnit file does not match the console"
import re, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
console = open(sys.argv[2]).read()
table = {m[0]: tuple(map(int, m[1:])) for m in re.findall(r"^(\w+) +(\d+) +(\d+) +(\d+)$", console, re.M)}
assert root.tag == "testsuites", root.tag
for suite in root.findall("testsuite"):
    cases = suite.findall("testcase")
    failed = sum(1 for c in cases if c.find("failure") is not None)
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    assert int(suite.get("tests")) == len(cases), suite.get("name")
    assert int(suite.get("failures")) == failed and int(suite.get("skipped")) == skipped, suite.get("name")
    assert table[suite.get("name")] == (len(cases) - failed - skipped, failed, skipped), (suite.get("name"), table[suite.get("name")])
    for c in cases:
        for tag in ("failure", "skipped"):
            if c.find(tag) is not None:
                assert c.find(tag).get("message"), c.get("name")
total = table["total"]
assert (int(root.get("tests")), int(root.get("failures")), int(root.get("skipped"))) == (sum(total), total[1], total[2]), root.attrib
assert total[1] > 0 and root.find("testsuite[@name='rmsnorm']/testcase/failure") is not None
print("JUnit: %s tests, %s failures, %s skipped" % (root.get("tests"), root.get("failures"), root.get("skipped")))
PY
    ;;
  exit_in_create)
    run 1 "$selftest" --option fault=exit_in_create
    has "^FAIL: .*libhetero-ep-selftest.so: the process running the plugin exited with status 0 while creating provider selftest \(create\), without a verdict"
    ;;
  exit_while_loading)
    run 1 "$hostile/libhetero-ep-exitinconstructor.so"
    has "^FAIL: .*libhetero-ep-exitinconstructor.so: the process running the plugin exited with status 0 while loading the plugin \(dlopen\)"
    ;;
  segfault_in_case)
    run 1 "$selftest" --option fault=crash_in_matmul
    has "^FAIL .*libhetero-ep-selftest.so: the process running the plugin was killed by SIGSEGV .* while running case matmul/"
    has "^  matmul +passed +0 +failed +1 .*\[interrupted: [0-9]+ not run\]"
    has "^FAIL: [0-9]+ passed, 1 failed, [0-9]+ skipped, [1-9][0-9]* not run \("
    ;;
  segfault_in_init)
    run 1 "$hostile/libhetero-ep-segfault.so"
    has "killed by SIGSEGV .* while calling hetero_ep_init"
    ;;
  hang_in_case)
    start=$SECONDS
    # Only the softmax cases: the reference ops' longest attention case takes
    # most of the 5 s limit on a loaded 2-core machine, and was killed first.
    run 1 "$selftest" --option fault=hang_in_softmax --timeout 5 --filter softmax/
    (( SECONDS - start < 60 )) || fail "took $((SECONDS - start)) s"
    has "made no progress for 5 s and was killed \(the limit is --timeout 5\) while running case softmax/"
    ;;
  hang_in_init)
    run 1 "$hostile/libhetero-ep-hang.so" --timeout 2
    has "made no progress for 2 s and was killed .* while calling hetero_ep_init"
    ;;
  not_loaded)
    run 2 "$bad/libhetero-ep-initfails.so"
    has "^NOT LOADED: .*libhetero-ep-initfails.so: it refused to start: "
    ;;
  nothing_ran)
    run 3 "$selftest" --option fault=refuse_everything
    has "^NOTHING RAN: 0*[0-9]+ passed, 0 failed, [1-9][0-9]* skipped .*refused every case that runs an op"
    run 3 "$selftest" --filter no-such-case
    has "^NOTHING RAN: 0 passed, 0 failed, 0 skipped .*no case matches the filter"
    ;;
  model)
    run 0 "$selftest" --model "$model"
    has "^model stories260K.gguf: llama, 5 layers"
    for row in "embedding +f32 +yes +\[512,64\]" "rmsnorm +f32 +yes +width 64" "matmul +f32 +yes +\[64,64\]" \
               "rope +f32 +yes +head size 8" "store_rows +cache f32 +yes" "attention +cache f32 +yes +head size 8, 8 heads / 4 kv" \
               "add +f32 +yes" "swiglu +f32 +yes"; do
      has "^  $row"
    done
    has "^COVERED: "
    ;;
  model_not_covered)
    run 4 "$selftest" --option fault=refuse_everything --model "$model"
    has "^  matmul +f32 +NO"
    has "why: the self-test provider refuses every node .*\(layer 0 [a-z_]+, 1 token\)"
    has "^NOT COVERED: "
    ;;
  *) echo "unknown check $check"; exit 2 ;;
esac
echo "ok: $check"
