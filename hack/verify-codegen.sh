#!/usr/bin/env bash
# Fails (exit 1, with a unified diff) when committed generated code is stale, missing or
# extra (code-generator's hack/verify-codegen.sh). CI runs it.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec hack/update-codegen.sh verify
