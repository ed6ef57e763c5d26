#!/usr/bin/env bash
# npm test's static half, before the suites: lint (ESLint, type-aware), formatting (Prettier), the type check of
# src, test, bench and scripts, and the one build of src that every e2e file then shares (dist/). They run side by
# side; each prints only what is wrong, and the script fails if any of them does.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=node_modules/.bin
pids=()
names=()
run() {
  names+=("$1")
  shift
  "$@" &
  pids+=($!)
}
run eslint "$bin/eslint" .
run prettier "$bin/prettier" --check --log-level warn .
run typecheck "$bin/tsc" -p tsconfig.json --noEmit
run build "$bin/tsc" -b tsconfig.build.json
failed=()
for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
if [ ${#failed[@]} -gt 0 ]; then
  printf 'check failed: %s\n' "${failed[*]}" >&2
  exit 1
fi
