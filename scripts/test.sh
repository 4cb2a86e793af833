#!/usr/bin/env bash
# npm test: the checks and builds on both cores, then the tests compiled (scripts/build-tests.ts says why).
set -euo pipefail
cd "$(dirname "$0")/.."

# The tests' build type-checks the whole project, as `npm run typecheck` does; it runs beside the
# single-threaded lint, cycle check and builds.
npm run build:tests &
tests_build=$!
trap 'kill "$tests_build" 2>/dev/null || true' EXIT
npm run lint
npm run cycles
npm run build
npm run build:examples
wait "$tests_build"
trap - EXIT

mapfile -t files < <(find test -name '*.test.ts' | sort | sed 's|^|dist-test/|; s|\.ts$|.js|')
SVC_TEST_BUILT=1 exec node --test --test-concurrency=2 "$@" "${files[@]}"
