#!/bin/sh
# Rebuilds web/dist/graphiql.{js,css} from the pinned dependencies in this
# directory. The output is committed and embedded into the Go binary, so the
# playground never needs network access at runtime.
set -eu
cd "$(dirname "$0")"

# Lockfile entries must not name a registry host, so drop any "resolved" URL
# that an npm install may have written; npm ci fetches from whichever
# registry the builder is configured for and checks the recorded integrity.
node strip-resolved.cjs

npm ci --no-audit --no-fund

# Bundles, drops GraphiQL's unused fonts and precompresses: build.mjs.
node build.mjs
