#!/usr/bin/env bash
# Regenerates the committed generated code (code-generator's hack/update-codegen.sh):
#  1. the golden output of the codegen test API tree (codegen/testdata/apis → client);
#  2. the runtime's built-in clientset, listers and informers (runtime/src/apis, marked
#     aliases of k8s-openapi types → runtime/src/kubernetes), each group behind the runtime's
#     cargo feature of its name (`--group-features kubegen`). No fake clientset there: the
#     runtime cannot depend on the test server; kubegen_testserver::fake::kubernetes is it;
#  3. the sample controller's Foo API: clientset (with fake), listers and informers;
#  4. the real-world trees (cert-manager, Gateway API, Prometheus Operator, a workload
#     CRD: codegen/testdata/realworld/apis → client);
#  (the test tree, the runtime's built-in tree, the sample controller and both fixture crates
#  also get apply configurations, `--with-applyconfig`)
#  5. the #![deny(warnings)] fixture crate (codegen/fixtures/deny-warnings: every marker
#     form);
#  6. the CRDs of the CRD test tree (`kubegen-codegen crd`: codegen/testdata/crd/apis →
#     codegen/testdata/crd/crds, one <group>_<plural>.yaml per resource);
#  7. the examples' CRDs and RBAC roles (config/crd, config/rbac/role.yaml, kubebuilder's
#     layout): the sample controller's from its API tree and `+kubebuilder:rbac` markers,
#     the foo-operator's from its derived Foo (`foo-operator crd`) and its markers, and its
#     webhook configurations (config/webhook/manifests.yaml) from its `+kubebuilder:webhook`
#     markers.
#  8. types imported from the real CRDs and a CRD of every schema shape
#     (`kubegen-codegen import-crd`: codegen/testdata/crds, codegen/testdata/import →
#     codegen/fixtures/imported-crds/src/apis), then their
#     clientset (with fake), listers and informers (→ src/client).
# Each generates zz_generated_*.rs beside the version modules of its API tree and the
# clientset / listers / informers of its output directory.
# `hack/update-codegen.sh verify` checks all of them instead of writing.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode="${1:-update}"

# The generator and the foo-operator binary. CI sets KUBEGEN_PREBUILT_BIN_DIR to its test
# build's `debug` directory (built from this same checkout by `cargo nextest run
# --workspace`): `cargo run -p` would resolve the packages' features apart from the
# workspace's and compile the dependency graph a second time.
prebuilt="${KUBEGEN_PREBUILT_BIN_DIR:-}"
if [[ -n "${prebuilt}" ]]; then
  for bin in kubegen-codegen foo-operator; do
    if [[ ! -x "${prebuilt}/${bin}" ]]; then
      echo "KUBEGEN_PREBUILT_BIN_DIR=${prebuilt} has no ${bin}: build the workspace's tests first" >&2
      exit 1
    fi
  done
else
  cargo build --quiet --locked -p kubegen-codegen --bin kubegen-codegen
fi
kubegen_codegen() {
  if [[ -n "${prebuilt}" ]]; then
    "${prebuilt}/kubegen-codegen" "$@"
  else
    cargo run --quiet --locked -p kubegen-codegen --bin kubegen-codegen -- "$@"
  fi
}
foo_operator() {
  if [[ -n "${prebuilt}" ]]; then
    "${prebuilt}/foo-operator" "$@"
  else
    cargo run --quiet --locked -p foo-operator -- "$@"
  fi
}
codegen() {
  kubegen_codegen "${mode}" "$@"
}

codegen \
  --input-dir codegen/testdata/apis \
  --output-dir codegen/testdata/client \
  --output-module crate::client \
  --input-module crate::apis \
  --boilerplate codegen/testdata/boilerplate.txt \
  --with-fake \
  --with-applyconfig \
  --plural-exceptions Cactus:cacti

codegen \
  --input-dir runtime/src/apis \
  --output-dir runtime/src/kubernetes \
  --output-module crate::kubernetes \
  --input-module crate::apis \
  --boilerplate hack/boilerplate.txt \
  --with-applyconfig \
  --group-features kubegen

codegen \
  --input-dir examples/sample-controller/src/apis \
  --output-dir examples/sample-controller/src/client \
  --input-module crate::apis \
  --output-module crate::client \
  --boilerplate hack/boilerplate.txt \
  --with-fake \
  --with-applyconfig

codegen \
  --input-dir codegen/testdata/realworld/apis \
  --output-dir codegen/testdata/realworld/client \
  --output-module crate::client \
  --input-module crate::apis \
  --boilerplate codegen/testdata/boilerplate.txt \
  --with-fake

codegen \
  --input-dir codegen/fixtures/deny-warnings/src/apis \
  --output-dir codegen/fixtures/deny-warnings/src/client \
  --input-module crate::apis \
  --output-module crate::client \
  --boilerplate hack/boilerplate.txt \
  --with-fake \
  --with-applyconfig

verify_flags=()
if [[ "${mode}" == "verify" ]]; then
  verify_flags=(--verify)
fi
manifests() {
  kubegen_codegen "$@" "${verify_flags[@]}"
}

manifests crd \
  --input-dir codegen/testdata/crd/apis \
  --input-module crate::apis \
  --output-dir codegen/testdata/crd/crds

manifests crd \
  --input-dir examples/sample-controller/src/apis \
  --output-dir examples/sample-controller/config/crd
manifests rbac \
  --input-dir examples/sample-controller/src \
  --output examples/sample-controller/config/rbac/role.yaml

manifests rbac \
  --input-dir examples/foo-operator/src \
  --output examples/foo-operator/config/rbac/role.yaml
manifests webhook \
  --input-dir examples/foo-operator/src \
  --output examples/foo-operator/config/webhook/manifests.yaml
# The foo-operator's Foo is derived (`#[derive(kubegen::Schema)]`): its CRD is
# `Foo::crd()`, written by the operator binary itself (kube-rs's `crdgen` pattern).
foo_crd=examples/foo-operator/config/crd/samplecontroller.k8s.io_foos.yaml
if [[ "${mode}" == "verify" ]]; then
  if ! diff -u "${foo_crd}" <(foo_operator crd); then
    echo "${foo_crd} is out of date; run hack/update-codegen.sh" >&2
    exit 1
  fi
else
  mkdir -p "$(dirname "${foo_crd}")"
  foo_operator crd > "${foo_crd}"
fi

kubegen_codegen import-crd "${verify_flags[@]}" \
  --crd codegen/testdata/crds/cert-manager.io_certificates.yaml \
  --crd codegen/testdata/crds/gateway.networking.k8s.io_gatewayclasses.yaml \
  --crd codegen/testdata/crds/gateway.networking.k8s.io_gateways.yaml \
  --crd codegen/testdata/crds/monitoring.coreos.com_servicemonitors.yaml \
  --crd codegen/testdata/import/shapes.kubegen.dev_widgets.yaml \
  --output-dir codegen/fixtures/imported-crds/src/apis \
  --output-module crate::apis \
  --boilerplate hack/boilerplate.txt

codegen \
  --input-dir codegen/fixtures/imported-crds/src/apis \
  --output-dir codegen/fixtures/imported-crds/src/client \
  --input-module crate::apis \
  --output-module crate::client \
  --boilerplate hack/boilerplate.txt \
  --with-fake \
  --with-applyconfig
