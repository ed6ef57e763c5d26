#!/usr/bin/env bash
# npm test's static checks (scripts/test.sh runs them beside Jest): lint (ESLint, type-aware), formatting
# (Prettier) and the type check of src, test, bench and scripts. They run side by side; each prints only what is
# wrong, and the script fails if any of them does. The type check is TypeScript 7's native tsc (the `typescript7`
# alias), on one thread: npm test runs it beside the suites on a busy machine, where its parallel checkers would
# only add CPU (ADR 0017, "Later").
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
run typecheck node_modules/typescript7/bin/tsc -p tsconfig.json --noEmit --singleThreaded
failed=()
for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
if [ ${#failed[@]} -gt 0 ]; then
  printf 'check failed: %s\n' "${failed[*]}" >&2
  exit 1
fi
