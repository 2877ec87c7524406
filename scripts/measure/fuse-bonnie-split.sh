#!/usr/bin/env bash
# Where a bonnie++ create's CPU time goes: bonnie++ itself (the requester, its system calls and
# the FUSE requests they send) against passthrough_hp's threads (ring threads and /dev/fuse
# workers), per create, from /proc counters over 1.5 s inside the sequential-create phase of
# `bonnie++ -s0 -n 100:1:1:20` (no tracing). bonnie++ writes one byte per created file, so its
# write() calls count the creates. Series: /dev/fuse and -o io_uring, each unpinned and under
# taskset -c 0.
# Usage: scripts/measure/fuse-bonnie-split.sh PASSTHROUGH_HP [RUNS]
# Needs root (mount, tmpfs), bonnie++, and a kernel with CONFIG_FUSE_IO_URING.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/measure/fuse-mount.sh
. "$here/fuse-mount.sh"
fuse_script_start "$@"
pat='^(bonnie\+\+|fuse-ring-[0-9]+|passthrough_hp|fuse_worker)$'
one() {  # $1: series name, rest: command prefix
    local name=$1
    shift
    mkdir -p "$mnt/b"
    "$@" bonnie++ -q -u root -s0 -n 100:1:1:20 -d "$mnt/b" >/dev/null 2>&1 &
    local job=$!
    sleep 0.5
    "$here/thread-counters.py" snap "$pat" "$work/s1"
    sleep 1.5
    "$here/thread-counters.py" snap "$pat" "$work/s2"
    kill "$job" 2>/dev/null || true  # the later phases (stat, delete) are not measured
    wait "$job" 2>/dev/null || true
    rm -rf "${mnt:?}/b"
    python3 - "$name" "$work/s1" "$work/s2" <<'P'
import json, sys
a, b = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
dt = b["time"] - a["time"]
common = [t for t in b["threads"] if t in a["threads"]]
d = lambda t, k: b["threads"][t][k] - a["threads"][t][k]
app = [t for t in common if b["threads"][t]["comm"] == "bonnie++"]
srv = [t for t in common if b["threads"][t]["comm"] != "bonnie++"]
creates = sum(d(t, "syscw") for t in app)
if creates == 0:
    print("%-8s no create in the window (bonnie++ failed or the phase was over)" % sys.argv[1])
    sys.exit(0)
ac = sum(d(t, "exec_ms") for t in app) * 1e3 / creates
sc = sum(d(t, "exec_ms") for t in srv) * 1e3 / creates
print("%-8s %6.0f creates/s  bonnie++: %5.1f us CPU/create, %.3f moves/create  server: %5.1f us CPU/create (%d threads)  server share %.2f"
      % (sys.argv[1], creates / dt, ac, sum(d(t, "migrations") for t in app) / creates, sc, len(srv), sc / (ac + sc)))
P
}
for mode in dev io_uring; do
    if [ "$mode" = dev ]; then start_fs ""; else start_fs "-o io_uring"; fi
    for _ in $(seq "$runs"); do
        one "$mode" env
        one "$mode-0" taskset -c 0
    done
    stop_fs
done
