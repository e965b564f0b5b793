#!/bin/sh
# Installs the client check's pinned modules (package-lock.json) into a
# cache directory outside the repository, where web/clientcheck_test.go
# looks for them: $GPUGRAPH_CLIENTCHECK_DIR, else the user cache directory
# (~/.cache/gpugraph-clientcheck). Needs npm and a registry.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
exec sh "$here/../../internal/lib/npmtest/install.sh" "$here" gpugraph-clientcheck "${GPUGRAPH_CLIENTCHECK_DIR:-}"
