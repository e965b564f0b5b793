#!/bin/sh
# generate.sh OUT: the steps of build.sh after its install, on modules
# already in node_modules (web/console_build_test.go links the installed
# ones): codegen into src/gql, tsc --noEmit, the bundle into OUT.
set -eu
cd "$(dirname "$0")"
node node_modules/@graphql-codegen/cli/esm/bin.js --config codegen.yml --silent
node node_modules/typescript/bin/tsc --noEmit -p tsconfig.json
node build.mjs "$1"
