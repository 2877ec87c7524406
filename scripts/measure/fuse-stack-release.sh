#!/usr/bin/env bash
# /dev/fuse, fio psync: starts fio and every passthrough_hp thread on vCPU 0 (taskset), counts
# where the wakeups land for 5 s (bpf/fuse-dev-wakes.bt), then allows both vCPUs to all of them
# and counts again: does the kernel keep the stacked pair it was given, or split it?
# Usage: scripts/measure/fuse-stack-release.sh PASSTHROUGH_HP [RUNS]
# Needs root (mount, tmpfs, bpftrace with tracefs mounted), fio.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/measure/fuse-mount.sh
. "$here/fuse-mount.sh"
fuse_script_start "$@"
start_fs ""
srv=$(pgrep -f -- "--foreground --nopassthrough" | head -1)
for _ in $(seq "$runs"); do
    taskset -a -p -c 0 "$srv" >/dev/null
    taskset -c 0 fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 \
        --time_based --runtime=14 --ioengine=psync --iodepth=1 --output-format=terse >"$work/fio.txt" &
    job=$!
    sleep 2
    echo "== all on vCPU 0"
    bpftrace "$here/bpf/fuse-dev-wakes.bt" 2>/dev/null | grep -E '^@(w|reads)'
    taskset -a -p -c 0,1 "$srv" >/dev/null
    for p in $(pgrep -x fio); do taskset -a -p -c 0,1 "$p" >/dev/null; done
    echo "== both vCPUs allowed"
    bpftrace "$here/bpf/fuse-dev-wakes.bt" 2>/dev/null | grep -E '^@(w|reads)'
    wait "$job"
    awk -F';' '{print "IOPS over the whole run:", $8}' "$work/fio.txt"
done
stop_fs
