#!/usr/bin/env bash
# The whole test suite: type check, then every vitest suite. Ends with "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
mkdir -p .tmp

if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)'; then
  echo "Node 24 is required (found $(node --version)); run npm install first" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

typecheck_failed=0
echo "== type check"
if ! tsc --noEmit -p .; then typecheck_failed=1; fi
if ! tsc --noEmit -p ui; then typecheck_failed=1; fi

echo "== layers (.dependency-cruiser.cjs: no import cycle, no import from a higher layer)"
layers_failed=0
if ! depcruise --config .dependency-cruiser.cjs --output-type err src layers bin; then layers_failed=1; fi

echo "== tests"
rm -f .tmp/vitest-results.json
vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest-results.json "$@"
vitest_status=$?

node scripts/summary.ts .tmp/vitest-results.json "$typecheck_failed" "$layers_failed"
summary_status=$?
if [ "$vitest_status" -ne 0 ] || [ "$typecheck_failed" -ne 0 ] || [ "$layers_failed" -ne 0 ] || [ "$summary_status" -ne 0 ]; then exit 1; fi
