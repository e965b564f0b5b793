#!/bin/sh
# Rebuilds web/dist/console (index.html, console.js, console.css and their
# .gz/.br copies) from the pinned dependencies in this directory: the typed
# operations (src/gql, from ../../schema.graphqls), a strict type check, the
# minified bundle. The output and src/gql are committed and embedded into
# the Go binary; web/console_build_test.go fails when either is stale.
set -eu
cd "$(dirname "$0")"

# Lockfile entries must not name a registry host (see web/build/build.sh).
node ../build/strip-resolved.cjs

npm ci --no-audit --no-fund --ignore-scripts
sh generate.sh "${1:-../dist/console}"
