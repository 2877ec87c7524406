#!/usr/bin/env bash
# Runs a bpftrace program around 3 s of fio's io_uring engine at iodepth 4 (4 KiB random direct
# reads) over passthrough_hp -o io_uring, and prints the reads fio did and the program's maps.
# Programs: bpf/fio-uring-calls.bt (fio's io_uring_enter calls by arguments, its switches),
# bpf/ring-preempt.bt (does a ring thread's wake by fio preempt fio, and the EEVDF state of
# both autogroups), bpf/ring-sleep.bt (a ring thread's lag and delayed state at its sleeps),
# bpf/ring-fio-phases.bt (the ring thread's run after its wake of fio, fio's before its submit).
# bpf/fio-split.bt (psync: where fio's time a read goes, from its wake to its next sleep).
# Usage: scripts/measure/fio-uring-bpf.sh PASSTHROUGH_HP PROGRAM.bt [COMMAND PREFIX, e.g. taskset -c 0]
# Environment: MOUNT_OPTS (default "-o io_uring"; "" for /dev/fuse), FIO_ENGINE (default
# "--ioengine=io_uring --iodepth=4"; e.g. "--ioengine=psync").
# Needs root (mount, tmpfs, bpftrace), fio, and a kernel with CONFIG_FUSE_IO_URING and BTF.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 PASSTHROUGH_HP PROGRAM.bt [PREFIX...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
prog=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
hp=$1
shift 2
# shellcheck source=scripts/measure/fuse-mount.sh
. "$here/fuse-mount.sh"
fuse_setup "$hp"
start_fs "${MOUNT_OPTS--o io_uring}"
bpftrace "$prog" -o "$work/bt.txt" &
bt=$!
sleep 4  # bpftrace attaches
# shellcheck disable=SC2086  # FIO_ENGINE is a list of options
"${@:-env}" fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 --time_based \
    --runtime=3 ${FIO_ENGINE:---ioengine=io_uring --iodepth=4} --output-format=terse --terse-version=3 >"$work/fio.txt"
kill -INT "$bt"
wait "$bt" || true
echo "reads: $(awk -F';' '{print $6 / 4}' "$work/fio.txt")"
cat "$work/bt.txt"
stop_fs
