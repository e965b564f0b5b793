#!/bin/sh
# Rebuilds web/dist/console (index.html, console.js, console.css and their
# .gz/.br copies) from the pinned dependencies in this directory: the typed
# operations (src/gql, from ../../schema.graphqls), a strict type check, the
# minified bundle. The output and src/gql are committed and embedded into
# the Go binary; web/console_build_test.go fails when either is stale.
set -eu
cd "$(dirname "$0")"

# Lockfile entries must not name a registry host (see web/build/build.sh).
node -e '
const fs = require("fs");
const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
for (const p of Object.values(lock.packages || {})) delete p.resolved;
fs.writeFileSync("package-lock.json", JSON.stringify(lock, null, 2) + "\n");
'

npm ci --no-audit --no-fund --ignore-scripts
sh generate.sh "${1:-../dist/console}"
