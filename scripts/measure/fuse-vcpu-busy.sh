#!/usr/bin/env bash
# fio 4 KiB random reads through passthrough_hp, the four psync series of fuse-fio.sh (a, b on
# /dev/fuse; c-a, c-b on fuse-over-io-uring) and fio's io_uring engine at iodepth 4 unpinned (d)
# and under taskset -c 0 (d-pin): each vCPU's busy share (/proc/stat) and each kind of
# thread's CPU time and migrations per read (thread-counters.py) over 3 s of each 10-s run,
# divided by 3 s of fio's IOPS. Untraced.
# Usage: scripts/measure/fuse-vcpu-busy.sh PASSTHROUGH_HP [RUNS [SERIES...]]
# (SERIES: some of a b c-a c-b d d-pin; all six when none is named.)
# Needs root (mount, tmpfs), fio, and a kernel with CONFIG_FUSE_IO_URING for c-a and c-b.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/measure/fuse-mount.sh
. "$here/fuse-mount.sh"
fuse_script_start "$@"
series=" ${*:3} "
[ "$series" = "  " ] && series=" a b c-a c-b d d-pin "
snap() {  # $1: output prefix: /proc/stat's per-CPU lines, and thread-counters.py's snapshot
    grep '^cpu[0-9]' /proc/stat >"$1.stat"
    "$here/thread-counters.py" snap '^(fio|fuse_worker|passthrough_hp|fuse-ring-[0-9]+)$' "$1.threads"
}
report() {  # $1: series, $2 $3: snapshot prefixes, $4: fio's IOPS over the whole run
    python3 - "$@" <<'P'
import collections, json, sys
name, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
stat = lambda f: {l.split()[0]: [int(x) for x in l.split()[1:]] for l in open(f + '.stat')}
sa, sb = stat(a), stat(b)
cpus = []
for c in sorted(sb):
    d = [y - x for x, y in zip(sa[c], sb[c])]
    total = sum(d[:8])
    cpus.append('%s %.2f' % (c, (total - d[3] - d[4]) / total))
ta, tb = json.load(open(a + '.threads'))['threads'], json.load(open(b + '.threads'))['threads']
reads, cpu, moves = float(sys.argv[4]) * 3, collections.Counter(), collections.Counter()
for tid, t in tb.items():
    if tid in ta:
        kind = 'fuse-ring' if t['comm'].startswith('fuse-ring') else t['comm']
        cpu[kind] += (t['exec_ms'] - ta[tid]['exec_ms']) * 1e6
        moves[kind] += t['migrations'] - ta[tid]['migrations']
kinds = [k for k in ('fio', 'fuse_worker', 'passthrough_hp', 'fuse-ring') if cpu[k]]
print('%-4s busy %s  %.0f IOPS  CPU per read: %s; moves per read: %s' % (name, ', '.join(cpus), reads / 3,
      ', '.join('%s %.2f us' % (k, cpu[k] / 1e3 / reads) for k in kinds),
      ', '.join('%s %.3f' % (k, moves[k] / reads) for k in kinds)))
P
}
one() {  # $1: series name, rest: command prefix
    local name=$1
    [[ $series == *" $name "* ]] || return 0
    shift
    "$@" fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 --time_based \
        --runtime=10 "${engine[@]}" --output-format=terse >"$work/fio.txt" &
    local job=$!
    sleep 2.5
    snap "$work/s1"
    sleep 3
    snap "$work/s2"
    wait "$job"
    report "$name" "$work/s1" "$work/s2" "$(awk -F';' '{print $8}' "$work/fio.txt")"
}
engine=(--ioengine=psync --iodepth=1)
start_fs ""
for _ in $(seq "$runs"); do one a; one b taskset -c 0; done
stop_fs
start_fs "-o io_uring"
for _ in $(seq "$runs"); do one c-a; one c-b taskset -c 0; done
engine=(--ioengine=io_uring --iodepth=4)
for _ in $(seq "$runs"); do one d; one d-pin taskset -c 0; done
stop_fs
