#!/usr/bin/env bash
# Build time of a kubegen operator beside the same operator written with kube-rs.
#
#   hack/bench-build.sh [ROUNDS]        (default 3; BENCH_BUILD_DIR=... to keep the work)
#
# (a) a project scaffolded by `kubegen-codegen init` (kind Widget: a finalizer, an owned
#     Deployment of spec.replicas pods of spec.image, watched with owns, a Ready condition
#     from the Deployment's status, under the manager), depending on this checkout;
# (b) hack/bench-build/kube-rs-operator: the same reconcile on kube-rs 5 (kube client +
#     runtime Controller + kube-derive CustomResource, k8s-openapi `latest`; the Deployment
#     written by server-side apply).
# Both get this workspace's Cargo.lock (the same versions of every shared crate), the
# scaffold's [profile.*] sections, and their sources fetched beforehand (no download is
# timed). Each round builds each project in an empty target directory (`cargo build
# --timings`, the order alternating between rounds), then rebuilds after touching the
# reconciler. One release build each gives the binary size. Printed: medians over the
# rounds of cold wall time, cold CPU time (user + system of cargo and every rustc), the
# incremental rebuild, the release binary size, the ratios kubegen / kube-rs, and each
# project's 10 slowest crates (from the median round's `cargo build --timings` data).
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)
rounds="${1:-3}"
work="${BENCH_BUILD_DIR:-$(mktemp -d -t kubegen-bench-build.XXXXXX)}"
mkdir -p "${work}"
if [[ ! -x /usr/bin/time ]]; then
  echo "bench-build needs GNU time (/usr/bin/time): apt-get install time" >&2
  exit 2
fi

echo "work directory: ${work}"
echo "machine: $(nproc) cores; $(rustc --version)"
cargo run --quiet --locked -p kubegen-codegen --bin kubegen-codegen -- --help >/dev/null
codegen() {
  cargo run --quiet --locked -p kubegen-codegen --bin kubegen-codegen -- "$@"
}

kubegen_dir="${work}/kubegen-operator"
kube_rs_dir="${work}/kube-rs-operator"
rm -rf "${kubegen_dir}" "${kube_rs_dir}"
codegen init --name kubegen-operator --group example.com --version v1alpha1 \
  --kind Widget --dir "${kubegen_dir}" --kubegen-path "${repo}" >/dev/null
cp -r hack/bench-build/kube-rs-operator "${kube_rs_dir}"
# The same profile for both: the scaffold's.
sed -n '/^\[profile/,$p' "${kubegen_dir}/Cargo.toml" >>"${kube_rs_dir}/Cargo.toml"
for dir in "${kubegen_dir}" "${kube_rs_dir}"; do
  cp Cargo.lock "${dir}/Cargo.lock"
  (cd "${dir}" && cargo fetch --quiet)
done

# Every build below is a user's own: no CI overrides, incremental as cargo defaults it.
unset CARGO_TARGET_DIR CARGO_INCREMENTAL CARGO_BUILD_JOBS RUSTFLAGS RUSTC_WRAPPER

declare -A reconciler=([kubegen]="src/controllers/widget.rs" [kube-rs]="src/main.rs")
declare -A project=([kubegen]="${kubegen_dir}" [kube-rs]="${kube_rs_dir}")
results="${work}/results.tsv"
: >"${results}"

# time_build NAME KIND CMD...: runs CMD in NAME's project, appends "NAME KIND wall cpu" to
# the results.
time_build() {
  local name=$1 kind=$2
  shift 2
  local times="${work}/time.out"
  (cd "${project[${name}]}" && /usr/bin/time -f '%e %U %S' -o "${times}" "$@" >/dev/null 2>"${work}/${name}.log") || {
    echo "${name}: $* failed:" >&2
    tail -n 30 "${work}/${name}.log" >&2
    exit 1
  }
  local wall cpu
  read -r wall cpu < <(awk '{ print $1, $2 + $3 }' "${times}")
  printf '%s\t%s\t%s\t%s\n' "${name}" "${kind}" "${wall}" "${cpu}" >>"${results}"
  printf '  %-8s %-12s wall %7.1f s  cpu %7.1f s\n' "${name}" "${kind}" "${wall}" "${cpu}"
}

for round in $(seq 1 "${rounds}"); do
  echo "round ${round}/${rounds}"
  order=(kubegen kube-rs)
  ((round % 2 == 0)) && order=(kube-rs kubegen)
  for name in "${order[@]}"; do
    target="${work}/target-${name}"
    rm -rf "${target}"
    export CARGO_TARGET_DIR="${target}"
    time_build "${name}" cold cargo build --locked --timings
    mkdir -p "${work}/timings-${name}"
    cp "$(ls -t "${target}"/cargo-timings/cargo-timing-*.html | head -n 1)" \
      "${work}/timings-${name}/round-${round}.html"
    touch "${project[${name}]}/${reconciler[${name}]}"
    time_build "${name}" incremental cargo build --locked
  done
done

echo "release builds"
for name in kubegen kube-rs; do
  export CARGO_TARGET_DIR="${work}/target-${name}"
  time_build "${name}" release cargo build --locked --release
  bin=$(basename "${project[${name}]}")
  stat -c '%s' "${CARGO_TARGET_DIR}/release/${bin}" >"${work}/size-${name}"
done
unset CARGO_TARGET_DIR

python3 - "${work}" <<'EOF'
import json, re, statistics, sys
from pathlib import Path

work = Path(sys.argv[1])
rows = [l.split("\t") for l in (work / "results.tsv").read_text().splitlines()]

def values(name, kind, col):
    return [float(r[col]) for r in rows if r[0] == name and r[1] == kind]

def median(name, kind, col):
    return statistics.median(values(name, kind, col))

def crates(name):
    """The 10 slowest units of the median round (by cold wall time)."""
    walls = values(name, "cold", 2)
    mid = sorted(range(len(walls)), key=lambda i: walls[i])[len(walls) // 2]
    html = (work / f"timings-{name}" / f"round-{mid + 1}.html").read_text()
    data = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S).group(1))
    units = {}
    for u in data:
        key = f"{u['name']} {u['version']}" + (f" ({u['target'].strip()})" if u.get("target", "").strip() else "")
        units[key] = units.get(key, 0.0) + u["duration"]
    return sorted(units.items(), key=lambda kv: -kv[1])[:10]

size = {n: int((work / f"size-{n}").read_text()) for n in ("kubegen", "kube-rs")}
print()
print(f"{'':34}{'kubegen':>12}{'kube-rs':>12}{'ratio':>8}  target")
def line(label, a, b, unit, target):
    print(f"{label:34}{a:>10.1f}{unit:2}{b:>10.1f}{unit:2}{a / b:>8.2f}  <= {target}")
line("cold build, wall (median)", median("kubegen", "cold", 2), median("kube-rs", "cold", 2), " s", "1.0")
line("cold build, CPU (median)", median("kubegen", "cold", 3), median("kube-rs", "cold", 3), " s", "1.1")
line("incremental rebuild, wall (median)", median("kubegen", "incremental", 2), median("kube-rs", "incremental", 2), " s", "1.0")
line("release binary", size["kubegen"] / 2**20, size["kube-rs"] / 2**20, "MB", "1.2")
print(f"rounds: {len(values('kubegen', 'cold', 2))}; every run: {work / 'results.tsv'}")
for name in ("kubegen", "kube-rs"):
    print(f"\n{name}: 10 slowest crates of the median round (cargo build --timings, s)")
    for unit, secs in crates(name):
        print(f"  {secs:7.1f}  {unit}")
EOF
