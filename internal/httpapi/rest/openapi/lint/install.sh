#!/bin/sh
# Installs the OpenAPI lint's pinned modules (package-lock.json: Redocly's
# CLI) into a cache directory outside the repository, where
# internal/httpapi/rest/openapi/lint_test.go looks for them: $GPUGRAPH_OPENAPI_LINT_DIR,
# else the user cache directory (~/.cache/gpugraph-openapi-lint). Needs npm
# and a registry.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
exec sh "$here/../../../../lib/npmtest/install.sh" "$here" gpugraph-openapi-lint "${GPUGRAPH_OPENAPI_LINT_DIR:-}"
