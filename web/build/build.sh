#!/bin/sh
# Rebuilds web/dist/graphiql.{js,css} from the pinned dependencies in this
# directory. The output is committed and embedded into the Go binary, so the
# playground never needs network access at runtime.
set -eu
cd "$(dirname "$0")"

# Lockfile entries must not name a registry host, so drop any "resolved" URL
# that an npm install may have written; npm ci fetches from whichever
# registry the builder is configured for and checks the recorded integrity.
node -e '
const fs = require("fs");
const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
for (const p of Object.values(lock.packages || {})) delete p.resolved;
fs.writeFileSync("package-lock.json", JSON.stringify(lock, null, 2) + "\n");
'

npm ci --no-audit --no-fund

# Bundles, drops GraphiQL's unused fonts and precompresses: build.mjs.
node build.mjs
