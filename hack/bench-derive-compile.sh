#!/usr/bin/env bash
# Compile time of 20 resource types: `#[derive(kubegen::Resource)]` (Resource + DeepCopy
# impls, typed client, lister and informer per type) against the same types with
# kube-derive's `#[derive(CustomResource)]` (Resource impl, CRD with JSON schema).
# Builds each crate once to warm its dependencies, then times N rebuilds of the crate alone
# (`touch src/lib.rs && cargo build`) and prints the median, debug profile.
# Usage: hack/bench-derive-compile.sh [rounds]   (needs crates.io for kube-derive/schemars)
set -o errexit -o nounset -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-3}"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
export CARGO_TARGET_DIR="${BENCH_TARGET_DIR:-${tmp}/target}"

types=20
mk_kubegen() {
  local dir="${tmp}/with-kubegen"
  mkdir -p "${dir}/src"
  cat > "${dir}/Cargo.toml" <<TOML
[package]
name = "with-kubegen"
version = "0.0.0"
edition = "2024"
[workspace]
[dependencies]
kubegen = { path = "${root}/runtime" }
k8s-openapi = { version = "0.29", features = ["latest"] }
serde = { version = "1", features = ["derive"] }
TOML
  {
    echo "#![allow(dead_code)]"
    echo "use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;"
    echo "use serde::{Deserialize, Serialize};"
    for i in $(seq 1 "${types}"); do
      cat <<RS
/// +genclient
#[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::Resource)]
#[resource(group = "example.com", version = "v1")]
pub struct Thing${i} { pub metadata: ObjectMeta, pub spec: Thing${i}Spec, pub status: Option<Thing${i}Status> }
#[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::deepcopy::DeepCopy)]
pub struct Thing${i}Spec { pub name: String, pub replicas: Option<i32>, pub tags: Vec<String> }
#[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::deepcopy::DeepCopy)]
pub struct Thing${i}Status { pub ready: bool }
RS
    done
  } > "${dir}/src/lib.rs"
  echo "${dir}"
}

mk_kube() {
  local dir="${tmp}/with-kube-derive"
  mkdir -p "${dir}/src"
  cat > "${dir}/Cargo.toml" <<TOML
[package]
name = "with-kube-derive"
version = "0.0.0"
edition = "2024"
[workspace]
[dependencies]
kube = { version = "5.0.0", default-features = false, features = ["derive"] }
k8s-openapi = { version = "0.29", features = ["latest"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
serde_json = "1"
TOML
  {
    echo "#![allow(dead_code)]"
    echo "use kube::CustomResource;"
    echo "use schemars::JsonSchema;"
    echo "use serde::{Deserialize, Serialize};"
    for i in $(seq 1 "${types}"); do
      cat <<RS
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Thing${i}", namespaced, status = "Thing${i}Status")]
pub struct Thing${i}Spec { pub name: String, pub replicas: Option<i32>, pub tags: Vec<String> }
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Thing${i}Status { pub ready: bool }
RS
    done
  } > "${dir}/src/lib.rs"
  echo "${dir}"
}

time_crate() {
  local dir="$1" times=() start end
  (cd "${dir}" && cargo build --quiet)
  for _ in $(seq 1 "${rounds}"); do
    touch "${dir}/src/lib.rs"
    start=$(date +%s.%N)
    (cd "${dir}" && cargo build --quiet)
    end=$(date +%s.%N)
    times+=("$(echo "${end} - ${start}" | bc)")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (rounds + 1) / 2 ))p"
}

a=$(time_crate "$(mk_kubegen)")
b=$(time_crate "$(mk_kube)")
printf '| %d types | build of the crate alone (median of %d, debug) |\n|---|---|\n' "${types}" "${rounds}"
printf '| kubegen derive (Resource, DeepCopy, client, lister, informer) | %.2f s |\n' "${a}"
printf '| kube-derive CustomResource (Resource, CRD schema) | %.2f s |\n' "${b}"
