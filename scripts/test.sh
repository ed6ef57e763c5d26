#!/usr/bin/env bash
# `npm test` (after scripts/ensure-test-env.sh, its pre-step): the build that every e2e file spawns (`npm run
# build`: build/ by SWC, then the bundled entry points in dist/, ADR 0016), the static checks (scripts/check.sh) and
# every Jest suite (jest.all.config.js; arguments go to Jest).
#
# The checks do not gate the suites, so they run beside them instead of before, at the lowest CPU priority: on a
# machine with few cores the suites' processes come first, and the checks take the time those leave idle (while
# the build runs on one core, e2e files waiting on their service, the last files of the run). Run one after the
# other, the checks added about 40 s to npm test on the 2-core machine (docs/testing.md). Their findings are printed
# after Jest's, and npm test fails if the build, the checks or any suite does.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=node_modules/.bin
checks=$(mktemp)
trap 'rm -f "$checks"' EXIT
nice -n 19 scripts/check.sh >"$checks" 2>&1 &
check_pid=$!
if npm run --silent build; then
  "$bin/jest" -c jest.all.config.js "$@"
  suites=$?
else
  printf 'build failed: the suites did not run\n' >&2
  suites=1
fi
wait "$check_pid"
checked=$?
cat "$checks" >&2
exit $((suites != 0 || checked != 0))
