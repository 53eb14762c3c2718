#!/usr/bin/env bash
# Runs the cargo-fuzz targets under fuzz/ (nightly; installs cargo-fuzz if missing):
#   hack/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Default: 600 s for each of watch_stream, list_body, markers, crd_manifest, selectors,
# request, kubeconfig. New inputs that reach new code are added to fuzz/corpus/<target>/ (commit a
# minimised corpus: `cargo +nightly fuzz cmin <target>`); a crash is saved under
# fuzz/artifacts/<target>/ — copy it to fuzz/regressions/<target>/ with the fix, and the
# crates' tests/fuzz_corpus.rs replay it on stable in CI. Prints each target's executions
# and coverage (libFuzzer's final stats) at the end.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds="${1:-600}"
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(watch_stream list_body markers crd_manifest selectors request kubeconfig)
fi

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "hack/fuzz.sh needs the nightly toolchain (rustup toolchain install nightly)" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

export CARGO_TARGET_DIR="${KUBEGEN_FUZZ_TARGET_DIR:-fuzz/target}"
summary=()
for target in "${targets[@]}"; do
  log="$(mktemp)"
  echo "== ${target}: ${seconds} s" >&2
  status=0
  cargo +nightly fuzz run --fuzz-dir fuzz "${target}" "fuzz/corpus/${target}" -- \
    -max_total_time="${seconds}" -print_final_stats=1 -timeout=10 -rss_limit_mb=4096 \
    2>&1 | tee "${log}" | grep -E "^(#[0-9]+.*(pulse|DONE)|==|SUMMARY|stat::)" >&2 || status=$?
  runs="$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "${log}" | grep -Eo '[0-9]+$' || echo '?')"
  cov="$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "${log}" | tail -1 || echo 'cov: ?')"
  corpus="$(ls "fuzz/corpus/${target}" | wc -l)"
  crashed="no"
  if grep -q "SUMMARY: \|panicked at\|deadly signal" "${log}"; then
    crashed="YES (see fuzz/artifacts/${target}/)"
  fi
  summary+=("${target}: executions ${runs}, ${cov}, corpus ${corpus} inputs, crash ${crashed}")
  rm -f "${log}"
done
printf '%s\n' "${summary[@]}"
if printf '%s\n' "${summary[@]}" | grep -q "crash YES"; then
  exit 1
fi
