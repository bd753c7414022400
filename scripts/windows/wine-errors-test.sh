#!/usr/bin/env bash
# Checks test.sh's classifier (wine-errors.sh) on recorded logs of failed test
# binaries: testdata/NAME.KIND.log must be classified KIND (`wine`: retried once;
# `test`: a test's failure, never retried). Run by test.sh before anything else.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=wine-errors.sh
. "$here/wine-errors.sh"
bad=0 n=0
for log in "$here"/testdata/*.log; do
  want=${log%.log}
  want=${want##*.}
  got=$(wine_failure_kind "$log")
  n=$((n + 1))
  if [[ $got != "$want" ]]; then
    printf 'wine-errors-test: %s: classified %s, expected %s\n' "$(basename "$log")" "$got" "$want" >&2
    bad=1
  fi
done
((n >= 6)) || { echo "wine-errors-test: only $n recorded logs found" >&2; exit 1; }
((bad == 0)) && printf 'wine-errors-test: %d recorded logs classified as expected\n' "$n" >&2
exit "$bad"
