# Shared by the shell tests of the CLI: the ok/FAIL report (check; $fail
# becomes 1 at the first failure) and a scratch directory $tmp, removed on exit.
fail=0
check() {  # check NAME CONDITION-EXIT-CODE
  if [[ "$2" == 0 ]]; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
