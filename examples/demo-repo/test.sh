#!/usr/bin/env bash
# Tests for calc.sh: `bash test.sh` exits 0 when every check passes.
source ./calc.sh

fail=0
check() {
  if [ "$2" = "$3" ]; then
    echo "ok   $1"
  else
    echo "FAIL $1: expected $3, got $2"
    fail=1
  fi
}

check "add 2 3" "$(add 2 3)" 5
check "multiply 4 5" "$(multiply 4 5)" 20
exit $fail
