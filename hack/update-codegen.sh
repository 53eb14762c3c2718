#!/usr/bin/env bash
# Regenerates the committed generated code (code-generator's hack/update-codegen.sh).
# Each invocation generates zz_generated_*.rs beside the version modules of an API tree
# and the clientset / listers / informers of its output directory.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode="${1:-update}"
# The codegen golden test tree (every marker combination).
cargo run --quiet --locked -p kubegen-codegen --bin kubegen-codegen -- "${mode}" \
  --input-dir codegen/testdata/apis \
  --output-dir codegen/testdata/client \
  --output-module crate::client \
  --input-module crate::apis \
  --boilerplate codegen/testdata/boilerplate.txt \
  --with-fake \
  --plural-exceptions Cactus:cacti

# The sample controller's Foo API: clientset (with fake), listers and informers.
cargo run --quiet --locked -p kubegen-codegen --bin kubegen-codegen -- "${mode}" \
  --input-dir examples/sample-controller/src/apis \
  --output-dir examples/sample-controller/src/client \
  --input-module crate::apis \
  --output-module crate::client \
  --boilerplate hack/boilerplate.txt \
  --with-fake
