#!/usr/bin/env bash
# gotest.sh ARGS...: `go test ARGS...`, its output as it comes, and on a
# failure a digest at the end: which tests failed and the lines they failed
# on. A failing multi-process test prints its cluster's whole log, which
# buries its own failure line in the middle of thousands; the digest puts
# it where a reader of the output's tail finds it.
set -uo pipefail

log="$(mktemp "${TMPDIR:-/tmp}/gotest.XXXXXX")"
trap 'rm -f "$log"' EXIT

"${GO:-go}" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
  echo
  echo "==> failures (digest of the output above)"
  grep -E -e '^\s*--- FAIL' -e '^(FAIL|panic:|fatal error:)' -e '^WARNING: DATA RACE' \
    -e '^\s+[A-Za-z0-9_]+_test\.go:[0-9]+: ' "$log" | grep -v -E '^\s+testlog\.go:' | head -200
fi
exit "$status"
