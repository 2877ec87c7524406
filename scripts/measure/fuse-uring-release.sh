#!/usr/bin/env bash
# fuse-over-io-uring, fio psync: fio starts under taskset -c 0 (c-b: it and queue 0's ring thread
# share vCPU 0), then is allowed both vCPUs (c-a). Per 1-s window, before and after: fio's reads
# (its pread calls, /proc/PID/io), its moves and CPU, and the ring threads' CPU
# (thread-counters.py). Does the kernel keep fio with its ring thread once it may leave, or go
# back to moving at most reply wakes, as c-a does from its start?
# Usage: scripts/measure/fuse-uring-release.sh PASSTHROUGH_HP [RUNS]
# Needs root (mount, tmpfs), fio, and a kernel with CONFIG_FUSE_IO_URING.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/measure/fuse-mount.sh
. "$here/fuse-mount.sh"
fuse_script_start "$@"
snap() { "$here/thread-counters.py" snap '^(fio|fuse-ring-[0-9]+)$' "$1"; }
window() {  # $1 $2: snapshots, $3: label
    python3 - "$@" <<'P'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
wall = b['time'] - a['time']
ta, tb = a['threads'], b['threads']
d = lambda tid, k: tb[tid][k] - ta[tid][k]
common = [t for t in tb if t in ta]
# fio's job is the fio thread that reads; the ring threads are fuse-ring-N.
job = max((t for t in common if tb[t]['comm'] == 'fio'), key=lambda t: d(t, 'syscr'))
reads = d(job, 'syscr')
ring = sum(d(t, 'exec_ms') for t in common if tb[t]['comm'].startswith('fuse-ring'))
print('%-8s %7.0f reads/s  fio moves a read %.3f  CPU a read: fio %.2f us, ring threads %.2f us' % (
    sys.argv[3], reads / wall, d(job, 'migrations') / reads, d(job, 'exec_ms') * 1e3 / reads, ring * 1e3 / reads))
P
}
start_fs "-o io_uring"
for _ in $(seq "$runs"); do
    taskset -c 0 fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 \
        --time_based --runtime=20 --ioengine=psync --iodepth=1 --output-format=terse >"$work/fio.txt" &
    job=$!
    sleep 2
    snap "$work/p0"; sleep 1; snap "$work/p1"; sleep 1; snap "$work/p2"
    window "$work/p0" "$work/p1" pinned
    window "$work/p1" "$work/p2" pinned
    for p in $(pgrep -x fio); do taskset -a -p -c 0,1 "$p" >/dev/null; done
    prev=$work/p2
    for i in 1 2 3 4 5 6 7 8; do
        sleep 1
        snap "$work/r$i"
        window "$prev" "$work/r$i" "free $i"
        prev=$work/r$i
    done
    wait "$job"
    awk -F';' '{print "IOPS over the whole run:", $8}' "$work/fio.txt"
done
stop_fs
