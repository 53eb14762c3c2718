#!/usr/bin/env bash
# Compile time of 20 resource types: `#[derive(kubegen::Resource)]` (Resource + DeepCopy
# impls, typed client, lister and informer per type) against the same types with
# kube-derive's `#[derive(CustomResource)]` (Resource impl, CRD with JSON schema).
# Builds each crate once to warm its dependencies, then times N rebuilds of the crate alone
# (`touch src/lib.rs && cargo build`) and prints the median (min-max), per type and the
# ratio, debug profile. Both crates hold the same 20 types (a resource with spec and
# status); each derive does its whole job: ours the Resource and DeepCopy impls, typed
# client, lister and informer beside each type; kube-derive the Resource impl and the CRD
# with its JSON schema (schemars). Generated methods nobody calls are `#[inline]`, so,
# as in a real crate, they cost their expansion and type checking but no code generation.
# BENCH_TARGET_DIR=dir keeps the warmed dependencies between runs.
# Usage: hack/bench-derive-compile.sh [rounds]   (needs crates.io for kube-derive/schemars)
set -o errexit -o nounset -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-3}"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
export CARGO_TARGET_DIR="${BENCH_TARGET_DIR:-${tmp}/target}"

types=20
# mk_kubegen N: the crate with N derived types (0: its dependencies alone).
mk_kubegen() {
  local n="$1" dir="${tmp}/with-kubegen"
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
    echo "#![allow(dead_code, unused_imports)]"
    echo "use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;"
    echo "use serde::{Deserialize, Serialize};"
    for i in $(seq 1 "${n}"); do
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
  } > "${dir}/src/lib.rs.new"
  # Unchanged text keeps its mtime: cargo then only rebuilds when time_crate touches it.
  cmp -s "${dir}/src/lib.rs.new" "${dir}/src/lib.rs" 2>/dev/null || mv "${dir}/src/lib.rs.new" "${dir}/src/lib.rs"
  rm -f "${dir}/src/lib.rs.new"
  echo "${dir}"
}

# mk_kube N: the same N types with kube-derive.
mk_kube() {
  local n="$1" dir="${tmp}/with-kube-derive"
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
    echo "#![allow(dead_code, unused_imports)]"
    echo "use kube::CustomResource;"
    echo "use schemars::JsonSchema;"
    echo "use serde::{Deserialize, Serialize};"
    for i in $(seq 1 "${n}"); do
      cat <<RS
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Thing${i}", namespaced, status = "Thing${i}Status")]
pub struct Thing${i}Spec { pub name: String, pub replicas: Option<i32>, pub tags: Vec<String> }
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Thing${i}Status { pub ready: bool }
RS
    done
  } > "${dir}/src/lib.rs.new"
  # Unchanged text keeps its mtime: cargo then only rebuilds when time_crate touches it.
  cmp -s "${dir}/src/lib.rs.new" "${dir}/src/lib.rs" 2>/dev/null || mv "${dir}/src/lib.rs.new" "${dir}/src/lib.rs"
  rm -f "${dir}/src/lib.rs.new"
  echo "${dir}"
}

# time_crate DIR: "median min max" of the rebuild times in seconds.
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
  local sorted
  mapfile -t sorted < <(printf '%s\n' "${times[@]}" | sort -n)
  echo "${sorted[$(( (rounds - 1) / 2 ))]} ${sorted[0]} ${sorted[$(( rounds - 1 ))]}"
}

read -r a a_min a_max <<<"$(time_crate "$(mk_kubegen "${types}")")"
read -r a0 _ _ <<<"$(time_crate "$(mk_kubegen 0)")"
read -r b b_min b_max <<<"$(time_crate "$(mk_kube "${types}")")"
read -r b0 _ _ <<<"$(time_crate "$(mk_kube 0)")"
# Per type: the crate's time over the same crate without the types (its use declarations
# and dependencies' metadata alone), divided by the type count.
per_type() { echo "scale=1; ($1 - $2) * 1000 / ${types}" | bc; }
ka=$(per_type "${a}" "${a0}")
kb=$(per_type "${b}" "${b0}")
printf '| %d types, rebuild of the crate alone (debug, median of %d) | crate (min-max) | without the types | per type |\n|---|---|---|---|\n' "${types}" "${rounds}"
printf '| kubegen derive (Resource, DeepCopy, client, lister, informer) | %.2f s (%.2f-%.2f) | %.2f s | %s ms |\n' \
  "${a}" "${a_min}" "${a_max}" "${a0}" "${ka}"
printf '| kube-derive CustomResource (Resource, CRD schema) | %.2f s (%.2f-%.2f) | %.2f s | %s ms |\n' \
  "${b}" "${b_min}" "${b_max}" "${b0}" "${kb}"
printf 'kubegen / kube-derive: %.2f per crate, %.2f per type\n' \
  "$(echo "scale=4; ${a} / ${b}" | bc)" "$(echo "scale=4; ${ka} / ${kb}" | bc)"
