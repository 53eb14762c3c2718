#!/usr/bin/env bash
# Times `kubegen-codegen update` and `verify` on a generated tree of 50 resource types
# (5 groups x 2 versions x 5 types, each with spec and status structs: 150 structs), and
# `update` on the runtime's built-in tree (runtime/src/apis, copied to a temporary
# directory so nothing committed is touched) without and with `--with-applyconfig`.
# Each figure is the median (and min-max) of ROUNDS runs (default 5).
# Usage: hack/bench-codegen.sh [--release] [ROUNDS]
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

profile_flag=()
profile_dir=debug
if [[ "${1:-}" == "--release" ]]; then
  profile_flag=(--release)
  profile_dir=release
  shift
fi
rounds="${1:-5}"
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
cp -r runtime/src/apis "${tmp}/builtin"

# ms <command...>: runs the command (output discarded; a non-zero exit is not an error,
# `verify` of a fresh tree exits 0 but the timing stands either way) and prints the
# wall time in milliseconds.
ms() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || true
  end=$(date +%s%N)
  echo $(( (end - start) / 1000000 ))
}

# summary <ms...>: "median ms (min-max)".
summary() {
  local sorted
  mapfile -t sorted < <(printf '%s\n' "$@" | sort -n)
  local n=${#sorted[@]}
  echo "${sorted[$(( (n - 1) / 2 ))]} ms (min ${sorted[0]}, max ${sorted[$(( n - 1 ))]}, ${n} runs)"
}

args=(--input-dir "${tmp}/apis" --output-dir "${tmp}/client" --output-module crate::client)
builtin=(--input-dir "${tmp}/builtin" --output-module crate::kubernetes
  --input-module crate::apis --boilerplate hack/boilerplate.txt)
update=() verify=() plain=() apply=()
for _ in $(seq 1 "${rounds}"); do
  rm -rf "${tmp}/client"
  update+=("$(ms "${bin}" update "${args[@]}")")
  verify+=("$(ms "${bin}" verify "${args[@]}")")
  rm -rf "${tmp}/out-plain" "${tmp}/out-apply"
  plain+=("$(ms "${bin}" update "${builtin[@]}" --output-dir "${tmp}/out-plain")")
  apply+=("$(ms "${bin}" update "${builtin[@]}" --output-dir "${tmp}/out-apply" --with-applyconfig)")
done
# One more run of each, checked: a failure must not pass for a fast run.
rm -rf "${tmp}/client" "${tmp}/out-plain" "${tmp}/out-apply"
"${bin}" update "${args[@]}"
"${bin}" verify "${args[@]}" >/dev/null
"${bin}" update "${builtin[@]}" --output-dir "${tmp}/out-plain"
"${bin}" update "${builtin[@]}" --output-dir "${tmp}/out-apply" --with-applyconfig

files=$(find "${tmp}/apis" "${tmp}/client" -name '*.rs' | wc -l)
plain_files=$(find "${tmp}/out-plain" -name '*.rs' | wc -l)
apply_files=$(find "${tmp}/out-apply" -name '*.rs' | wc -l)
echo "kubegen-codegen (${profile_dir}): 50 resource types / 150 structs in 10 packages (${files} generated files)"
echo "  update: $(summary "${update[@]}")"
echo "  verify: $(summary "${verify[@]}")"
echo "built-in tree (runtime/src/apis, to a temporary output dir)"
echo "  update:                    $(summary "${plain[@]}") (${plain_files} files under the output dir)"
echo "  update --with-applyconfig: $(summary "${apply[@]}") (${apply_files} files under the output dir)"
