#!/usr/bin/env bash
# Initial-sync wall and CPU time of each workload of runtime/benches/informer.rs, measured
# alone and many times: one server process holds N ConfigMaps, and each run is a fresh
# process that syncs once and exits (`--child <workload> <url> N` with
# KUBEGEN_BENCH_SYNC_ONLY=1). Workloads alternate, so a change in machine load hits them
# alike; the table gives the mean and the spread. Steadier than the full bench's medians
# of three on a shared machine, which is what it is for: comparing sync CPU against kube-rs.
# Usage: hack/bench-sync-cpu.sh [objects] [runs] [workloads]
#        (defaults: 100000, 10, "kubegen kube-rs floor")
set -o errexit -o nounset -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
objects="${1:-100000}"
runs="${2:-10}"
read -r -a workloads <<< "${3:-kubegen kube-rs floor}"

cd "${root}"
bench="$(cargo bench -p kubegen --bench informer --no-run --message-format=json 2>/dev/null |
  sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)"
if [[ -z "${bench}" ]]; then
  echo "could not build the informer bench (cargo bench -p kubegen --bench informer)" >&2
  exit 1
fi

out="$(mktemp)"
"${bench}" --serve "${objects}" > "${out}" &
server=$!
trap 'kill "${server}" 2>/dev/null; rm -f "${out}"' EXIT
until [[ -s "${out}" ]]; do
  kill -0 "${server}" 2>/dev/null || { echo "the server exited" >&2; exit 1; }
  sleep 0.2
done
url="$(head -n 1 "${out}")"

# The child prints "synced <seconds> <peak KiB> <rss KiB> <cpu ms> <user ms> <sys ms>
# <minor faults>": the CPU split into user space and the kernel (mostly page faults: every
# page the cache grows into is mapped and zeroed by the kernel).
for _ in $(seq "${runs}"); do
  for w in "${workloads[@]}"; do
    KUBEGEN_BENCH_SYNC_ONLY=1 "${bench}" --child "${w}" "${url}" "${objects}" < /dev/null |
      awk -v w="${w}" '$1 == "synced" { print w, $2 * 1000, $5, $6, $7, $8 }'
  done
done | awk -v n="${objects}" -v order="${workloads[*]}" '
  { wall[$1] += $2; cpu[$1] += $3; user[$1] += $4; sys[$1] += $5; faults[$1] += $6; cnt[$1]++
    if (!($1 in lo) || $3 < lo[$1]) lo[$1] = $3
    if (!($1 in hi) || $3 > hi[$1]) hi[$1] = $3 }
  END {
    print "| objects | workload | runs | initial sync (mean) | sync CPU (mean) | sync CPU (min–max) | user | system | minor faults |"
    print "|---|---|---|---|---|---|---|---|---|"
    split(order, ws, " ")
    for (i = 1; i in ws; i++) {
      w = ws[i]
      if (cnt[w] == 0) continue
      printf "| %d | %s | %d | %.0f ms | %.0f ms | %d–%d ms | %.0f ms | %.0f ms | %.0f |\n", n, w, cnt[w], wall[w] / cnt[w], cpu[w] / cnt[w], lo[w], hi[w], user[w] / cnt[w], sys[w] / cnt[w], faults[w] / cnt[w]
    }
  }'
