#!/usr/bin/env bash
# Table B's fio at several iodepths on this machine: 4 KiB random reads with fio's io_uring
# engine (background FUSE requests) over passthrough_hp's fuse-over-io-uring, queue per CPU, the
# mainline placement (a background request on the submitter's CPU's queue). The published
# mainline rows go 195, 272 and 466 MiB/s at iodepth 1, 4 and 8 ("fuse: {io-uring} Queue
# background requests on a different core", Schubert): does iodepth 4 stay near iodepth 1 here?
# fio unpinned, 4 s runs, depths interleaved.
# Usage: scripts/measure/fuse-bg-depth.sh PASSTHROUGH_HP [RUNS] [DEPTHS]
# Needs root (mount, tmpfs), fio, and a kernel with CONFIG_FUSE_IO_URING.
# Prints per run: iodepth, IOPS, us per read, clat p50/p99, fio's moves and voluntary and
# involuntary switches per read (from /proc/PID/sched over the middle 2 s).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 PASSTHROUGH_HP [RUNS] [DEPTHS]" >&2; exit 2; }
runs=${2:-3}
depths=${3:-"1 2 4 8"}
# shellcheck source=scripts/measure/fuse-mount.sh
. "$(dirname "$0")/fuse-mount.sh"
fuse_setup "$1"
field() { awk -v k="$1" '$1 == k {print $3}' "/proc/$2/sched"; }
one() {  # $1: iodepth
    local qd=$1 pid m0 m1 v0 v1 i0 i1
    fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 --time_based \
        --runtime=4 --ioengine=io_uring --iodepth="$qd" --output-format=json >"$work/j" &
    local job=$!
    sleep 1
    pid=$(pgrep -n -x fio)
    m0=$(field se.nr_migrations "$pid"); v0=$(field nr_voluntary_switches "$pid"); i0=$(field nr_involuntary_switches "$pid")
    sleep 2
    m1=$(field se.nr_migrations "$pid"); v1=$(field nr_voluntary_switches "$pid"); i1=$(field nr_involuntary_switches "$pid")
    wait "$job"
    python3 - "$work/j" "$qd" "$m0" "$m1" "$v0" "$v1" "$i0" "$i1" <<'P'
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
iops = r["iops"]
reads = iops * 2
a = [int(x) for x in sys.argv[3:]]
pct = r["clat_ns"]["percentile"]
print("qd %-3s %8.0f IOPS  %6.2f us/read  clat p50 %.1f p99 %.1f us  moves/read %.3f  sleeps/read %.3f  preempted/read %.3f"
      % (sys.argv[2], iops, 1e6 / iops, pct["50.000000"] / 1e3, pct["99.000000"] / 1e3,
         (a[1] - a[0]) / reads, (a[3] - a[2]) / reads, (a[5] - a[4]) / reads))
P
}
start_fs "-o io_uring"
for _ in $(seq "$runs"); do
    for qd in $depths; do one "$qd"; done
done
stop_fs
