#!/usr/bin/env bash
# Where fio's and the ring threads' CPU time goes, by kernel path: perf record -e cpu-clock -g -a
# for 3 s of fio's io_uring engine (4 KiB random direct reads, iodepth QD, default 8) under
# taskset -c PIN (default 1) over passthrough_hp -o io_uring, then each sample's stack classed by
# the first of these it contains: the submit path (io_submit_sqes), the completions' task work
# (__io_run_local_work), the wait (io_cqring_wait), schedule(), another system call path
# (do_syscall_64), other kernel code, or user space (no kernel frame). On a guest whose timer interrupts are held while
# interrupts are off, samples land where they are re-enabled: read the stacks, not the leaves.
# docs/validation.md, "What a move costs fio on the VM".
# Usage: [QD=8] [PIN=1] scripts/measure/fio-perf-split.sh PASSTHROUGH_HP
# Needs root (mount, tmpfs, perf), fio, and a kernel with CONFIG_FUSE_IO_URING.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 PASSTHROUGH_HP" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/measure/fuse-mount.sh
. "$here/fuse-mount.sh"
fuse_setup "$1"
start_fs "-o io_uring"
(cd "$work" && taskset -c "${PIN:-1}" fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 \
    --time_based --runtime=6 --ioengine=io_uring --iodepth="${QD:-8}" --output-format=json >"$work/out.json") &
job=$!
sleep 1.5
perf record -e cpu-clock -F 49999 -g -a -o "$work/perf.data" -- sleep 3 >/dev/null 2>&1
wait "$job"
python3 -c "import json, sys; print('%.0f IOPS' % json.load(open(sys.argv[1]))['jobs'][0]['read']['iops'])" "$work/out.json"
perf script -i "$work/perf.data" -F comm,tid,ip,sym 2>/dev/null | python3 -c '
import collections, sys
order = [("io_submit_sqes", "submit"), ("__io_run_local_work", "completion task work"),
         ("io_cqring_wait", "wait"), ("__schedule", "schedule"), ("do_syscall_64", "other system call path")]
count, total = collections.Counter(), collections.Counter()
comm, syms, kernel = None, [], False
def flush():
    if comm is None:
        return
    s = set(syms)
    cls = next((c for f, c in order if f in s), "other kernel" if kernel else "user space")
    count[(comm, cls)] += 1
    total[comm] += 1
for line in sys.stdin:
    if not line.strip():
        flush(); comm, syms, kernel = None, [], False
    elif not line[0].isspace():
        flush(); comm, syms, kernel = line.split()[0], [], False
    else:
        parts = line.split()
        syms.append(parts[1] if len(parts) > 1 else "")
        kernel = kernel or parts[0].startswith("ffff")
flush()
for c in sorted(total, key=lambda c: -total[c]):
    if not (c == "fio" or c.startswith("fuse-ring")):
        continue
    print("%s: %d samples" % (c, total[c]))
    for (cc, cls), n in sorted(count.items(), key=lambda x: -x[1]):
        if cc == c:
            print("  %-24s %5.1f%%" % (cls, 100.0 * n / total[c]))
'
stop_fs
