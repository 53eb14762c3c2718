#!/usr/bin/env bash
# Regenerates the committed generated code (code-generator's hack/update-codegen.sh).
# Today that is the golden output of the codegen test API tree: zz_generated_*.rs beside
# each version module of codegen/testdata/apis.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode="${1:-update}"
cargo run --quiet --locked -p kubegen-codegen --bin kubegen-codegen -- "${mode}" \
  --input-dir codegen/testdata/apis \
  --output-dir codegen/testdata/client \
  --output-module crate::client \
  --input-module crate::apis \
  --boilerplate codegen/testdata/boilerplate.txt \
  --with-fake \
  --plural-exceptions Cactus:cacti
