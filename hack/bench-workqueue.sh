#!/usr/bin/env bash
# Workqueue add+get+done throughput against an unbounded tokio mpsc channel carrying the same
# keys (runtime/benches/workqueue.rs), release build. Prints, per configuration, the median
# and min-max over the runs of the queue's throughput relative to the channel.
# Usage: hack/bench-workqueue.sh [runs] [rounds per run]   (defaults: 5, 31)
set -o errexit -o nounset -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-5}"
rounds="${2:-31}"
cd "${root}"
exec cargo bench -p kubegen --bench workqueue -- --runs "${runs}" --rounds "${rounds}"
