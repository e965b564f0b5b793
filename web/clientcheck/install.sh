#!/bin/sh
# Installs the client check's pinned modules (package-lock.json) into a
# cache directory outside the repository, where web/clientcheck_test.go
# looks for them: $GPUGRAPH_CLIENTCHECK_DIR, else the user cache directory
# (~/.cache/gpugraph-clientcheck). Needs npm and a registry.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
dir="${GPUGRAPH_CLIENTCHECK_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpugraph-clientcheck}"
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
cd "$dir"
npm ci --no-audit --no-fund --ignore-scripts
cp package-lock.json node_modules/.gpugraph-lock
echo "clientcheck modules installed in $dir"
