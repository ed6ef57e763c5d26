#!/usr/bin/env bash
# `npm run conformance`: the official MCP conformance suite (0.2.0-alpha, the release that covers 2026-07-28
# and the Tasks extension) against the built HTTP service. The suite needs Node 22, taken from the npm
# package node@22 into a scratch folder; the expected failures (fixture tools a two-tool server does not
# have) are listed in conformance-baseline.yml, so any other failure fails the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
(cd "$work" && npm init -y >/dev/null && npm i --silent node@22 @modelcontextprotocol/conformance@0.2.0-alpha.12 >/dev/null)
port=${CONFORMANCE_PORT:-3399}
# A configured workspace.root must exist (the service refuses a missing one as a likely typo).
mkdir -p "$work/ws"
(cd "$root" && AGENT__SERVER__PORT=$port AGENT__DATABASE__PATH="$work/agent.sqlite" AGENT__WORKSPACE__ROOT="$work/ws" node dist/main.js >"$work/server.log" 2>&1) &
server=$!
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.2; done
curl -s -o /dev/null "http://127.0.0.1:$port/healthz" || { echo "the service did not start:" >&2; cat "$work/server.log" >&2; exit 1; }
export PATH="$work/node_modules/node/bin:$PATH"
status=0
for scenario in server-stateless http-header-validation tools-list caching dns-rebinding-protection tasks-capability-negotiation \
  resources-list resources-read-text resources-read-binary resources-templates-read sep-2164-resource-not-found; do
  "$work/node_modules/.bin/conformance" server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" --force \
    --expected-failures "$root/scripts/conformance-baseline.yml" -o "$work/out" | grep -E "Passed:|FAILURE" || status=1
done
exit $status
