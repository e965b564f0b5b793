#!/bin/sh
# Installs the pinned modules of one Node tool that the tests run:
#   sh internal/lib/npmtest/install.sh SOURCE CACHE [DIR]
# copies SOURCE's package.json and package-lock.json into DIR (else the
# user cache directory's CACHE, ~/.cache/CACHE), runs npm ci there, and
# leaves a copy of the lockfile beside the modules, where package npmtest
# checks that they are the ones the repository pins. Needs npm and a
# registry.
set -eu
src="$(cd "$1" && pwd)"
dir="${3:-}"
dir="${dir:-${XDG_CACHE_HOME:-$HOME/.cache}/$2}"
mkdir -p "$dir"
cp "$src/package.json" "$src/package-lock.json" "$dir/"
cd "$dir"
npm ci --no-audit --no-fund --ignore-scripts
cp package-lock.json node_modules/.gpugraph-lock
echo "modules of $src installed in $dir"
