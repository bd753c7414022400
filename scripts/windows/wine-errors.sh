# Sourced by test.sh: tells a failure of Wine itself from a failure of a test.
#
# `wine_failure_kind LOG` prints `wine` when the log of a test binary that exited
# non-zero shows an error of Wine's own (its client lost the wine server: "wine
# client error:0: recvmsg: Connection reset by peer", the server gone or unreachable)
# and no sign of a test failing; anything else prints `test`. A test that failed is
# never taken for Wine's error, even when Wine also broke afterwards: retrying could
# hide it.

# Lines by which Rust's test harness, or a panic, says a test failed.
WINE_TEST_FAILED_RE='^test .* \.\.\. FAILED$|^test result: FAILED|^failures:$|panicked at |^error: test failed'
# Lines Wine writes when it, not the program, failed.
WINE_OWN_ERROR_RE='^wine client error:|^wine: .*(server|wineserver)|^wineserver: .*(crash|died|killed|terminat)'

wine_failure_kind() {
  local log=$1
  if grep -Eq -- "$WINE_TEST_FAILED_RE" "$log"; then
    echo test
  elif grep -Eq -- "$WINE_OWN_ERROR_RE" "$log"; then
    echo wine
  else
    echo test
  fi
}
