#!/usr/bin/env bash
# Soak run of the deterministic fault simulation (sim/, crate kubegen-sim): N seeded
# schedules (default 1000; any count), from seed FIRST (default 0, or $KUBEGEN_SIM_FIRST).
# Prints `schedules: N, divergences: D` and exits non-zero when any schedule diverged
# (each diverging seed is printed with its schedule; the first three are shrunk).
# `--sharding` soaks the sharding scenario (a ring of sharded managers whose replicas
# join, leave, crash and are partitioned) instead of the informer/controller one.
# Replay one seed with: KUBEGEN_SIM_SEED=<seed> cargo nextest run -p kubegen-sim
#
# usage: hack/soak.sh [--sharding] [N] [FIRST]
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
test_file=simulation
test_name=soak
if [ "${1:-}" = "--sharding" ]; then
    test_file=sharding
    test_name=sharding_soak
    shift
fi
count="${1:-1000}"
first="${2:-${KUBEGEN_SIM_FIRST:-0}}"
case "$count$first" in
*[!0-9]*) echo "usage: hack/soak.sh [--sharding] [N] [FIRST] (non-negative integers)" >&2; exit 2 ;;
esac
KUBEGEN_SIM_SEEDS="$count" KUBEGEN_SIM_FIRST="$first" \
    exec cargo test --quiet -p kubegen-sim --test "$test_file" -- --ignored --exact "$test_name" --nocapture
