#!/bin/sh
# Installs the console's pinned modules (package-lock.json) into a cache
# directory outside the repository, where web/console_build_test.go and
# web/console_browser_test.go look for them: $GPUGRAPH_CONSOLE_DIR, else
# the user cache directory (~/.cache/gpugraph-console). Needs npm and a
# registry.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
exec sh "$here/../../internal/lib/npmtest/install.sh" "$here" gpugraph-console "${GPUGRAPH_CONSOLE_DIR:-}"
