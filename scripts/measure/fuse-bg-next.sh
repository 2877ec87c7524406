#!/usr/bin/env bash
# Table B's comparison on this machine: fio 4 KiB random reads with the io_uring engine at
# iodepth 4 (background FUSE requests) over passthrough_hp's fuse-over-io-uring, a background
# request served on the submitter's CPU (mainline) against on the next CPU (what "fuse: {io-uring}
# Queue background requests on a different core" does in the kernel). The kernel here has no such
# patch; the second build of passthrough_hp gets the same placement by pinning ring thread q to
# CPU q+1 (the kernel still picks queue task_cpu(current), whose ring thread then runs on the
# next CPU). Build it from the libfuse source of the first:
#   sed -i 's/^\tCPU_SET(qid, &mask);$/\tCPU_SET((qid + 1) % (int)sysconf(_SC_NPROCESSORS_ONLN), \&mask);/' lib/fuse_uring.c
# in fuse_uring_set_thread_core(), then meson setup build --buildtype debugoptimized && ninja -C build.
# Series per build: fio unpinned and under taskset -c 0; 4 s runs, interleaved.
# Usage: scripts/measure/fuse-bg-next.sh SAME/passthrough_hp NEXT/passthrough_hp [RUNS]
# Needs root (mount, tmpfs), fio, and a kernel with CONFIG_FUSE_IO_URING.
# Prints per run: build-series, IOPS, us per read, clat p50/p99, fio's moves and the vCPUs' halts
# (cpuidle state1 entries) per read.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 SAME/passthrough_hp NEXT/passthrough_hp [RUNS]" >&2; exit 2; }
same=$1
# shellcheck disable=SC2034  # read through ${!b} below
next=$2
runs=${3:-3}
# shellcheck source=scripts/measure/fuse-mount.sh
. "$(dirname "$0")/fuse-mount.sh"
fuse_setup "$same"
halts() { cat /sys/devices/system/cpu/cpu*/cpuidle/state1/usage 2>/dev/null | paste -sd+ | bc; }
one() {  # $1: label, rest: command prefix
    local name=$1 pid m0 m1 h0 h1
    shift
    "$@" fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 --time_based \
        --runtime=4 --ioengine=io_uring --iodepth=4 --output-format=json >"$work/j" &
    local job=$!
    sleep 1
    pid=$(pgrep -n -x fio)
    m0=$(awk '/nr_migrations/{print $3}' "/proc/$pid/sched")
    h0=$(halts)
    sleep 2
    m1=$(awk '/nr_migrations/{print $3}' "/proc/$pid/sched")
    h1=$(halts)
    wait "$job"
    python3 - "$work/j" "$name" "$m0" "$m1" "$h0" "$h1" <<'P'
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
iops = r["iops"]
reads = iops * 2
pct = r["clat_ns"]["percentile"]
print("%-10s %8.0f IOPS  %6.2f us/read  clat p50 %.1f p99 %.1f us  fio moves/read %.3f  halts/read %.3f"
      % (sys.argv[2], iops, 1e6 / iops, pct["50.000000"] / 1e3, pct["99.000000"] / 1e3,
         (int(sys.argv[4]) - int(sys.argv[3])) / reads, (int(sys.argv[6]) - int(sys.argv[5])) / reads))
P
}
for _ in $(seq "$runs"); do
    for b in same next; do
        hp=${!b}
        start_fs "-o io_uring"
        one "$b-un"
        one "$b-pin0" taskset -c 0
        stop_fs
    done
done
