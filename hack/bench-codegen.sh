#!/usr/bin/env bash
# Times `kubegen-codegen update` and `verify` on a generated tree of 50 resource types
# (5 groups x 2 versions x 5 types, each with spec and status structs: 150 structs).
# Usage: hack/bench-codegen.sh [--release]
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

profile_flag=()
profile_dir=debug
if [[ "${1:-}" == "--release" ]]; then
  profile_flag=(--release)
  profile_dir=release
fi
cargo build --quiet --locked -p kubegen-codegen --bin kubegen-codegen "${profile_flag[@]}"
bin="${CARGO_TARGET_DIR:-target}/${profile_dir}/kubegen-codegen"

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
for g in 1 2 3 4 5; do
  for v in v1 v2beta1; do
    dir="${tmp}/apis/group${g}/${v}"
    mkdir -p "${dir}"
    {
      echo "//! +groupName=group${g}.example.com"
      echo "//! +k8s:deepcopy-gen=package"
      echo "use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;"
      for t in 1 2 3 4 5; do
        cat <<RS
/// +genclient
/// +genclient:method=GetScale,verb=get,subresource=scale,result=Scale
pub struct Kind${t} { pub metadata: ObjectMeta, pub spec: Kind${t}Spec, pub status: Option<Kind${t}Status> }
pub struct Kind${t}Spec { pub replicas: Option<i32>, pub labels: std::collections::BTreeMap<String, String>, pub items: Vec<String> }
pub struct Kind${t}Status { pub ready: bool, pub conditions: Vec<String> }
RS
      done
    } > "${dir}/mod.rs"
  done
done

args=(--input-dir "${tmp}/apis" --output-dir "${tmp}/client" --output-module crate::client)
start=$(date +%s%N)
"${bin}" update "${args[@]}"
mid=$(date +%s%N)
"${bin}" verify "${args[@]}" 2>/dev/null
end=$(date +%s%N)
files=$(find "${tmp}/apis" -name 'zz_generated_*.rs' | wc -l)
echo "kubegen-codegen (${profile_dir}): 50 resource types / 150 structs in 10 packages"
echo "  update: $(( (mid - start) / 1000000 )) ms (${files} files written)"
echo "  verify: $(( (end - mid) / 1000000 )) ms"
