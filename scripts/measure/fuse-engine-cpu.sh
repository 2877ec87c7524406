#!/usr/bin/env bash
# CPU time per read of fio and of passthrough_hp's ring threads over fuse-over-io-uring, by fio
# engine, from /proc counters over 3 s of each 6 s run (no tracing): psync unpinned (c-a) and
# under taskset -c 0 (c-b), fio's io_uring engine unpinned at iodepth 4 (d) and 1 (e), and at
# iodepth 1 under taskset -c 0 (e-pin). Reads are fio's IOPS times the window. Also fio's moves a
# read. c-a against c-b and e against e-pin give what a move costs fio. docs/validation.md,
# "System calls and FUSE" and "What a move costs fio". SERIES picks the series (default
# "c-a c-b d e e-pin"; also g and g-pin: the io_uring engine at iodepth 8, unpinned and under
# taskset -c 1).
# Usage: [SERIES="..."] scripts/measure/fuse-engine-cpu.sh PASSTHROUGH_HP [RUNS]
# Needs root (mount, tmpfs), fio, and a kernel with CONFIG_FUSE_IO_URING.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/measure/fuse-mount.sh
. "$here/fuse-mount.sh"
fuse_script_start "$@"
start_fs "-o io_uring"
one() {  # $1: series name, rest: command prefix and fio engine options
    local name=$1
    shift
    "$@" --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 --time_based \
        --runtime=6 --output-format=json >"$work/out.json" &
    local job=$!
    sleep 1.5
    "$here/thread-counters.py" snap '^(fio|fuse-ring-[0-9]+)$' "$work/s1"
    sleep 3
    "$here/thread-counters.py" snap '^(fio|fuse-ring-[0-9]+)$' "$work/s2"
    wait "$job"
    python3 - "$name" "$work/s1" "$work/s2" "$work/out.json" <<'P'
import json, sys
iops = json.load(open(sys.argv[4]))["jobs"][0]["read"]["iops"]
a, b = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
dt = b["time"] - a["time"]
common = [t for t in b["threads"] if t in a["threads"]]
d = lambda t, k: b["threads"][t][k] - a["threads"][t][k]
job = max((t for t in common if b["threads"][t]["comm"] == "fio"), key=lambda t: d(t, "exec_ms"))
rings = [t for t in common if b["threads"][t]["comm"].startswith("fuse-ring")]
n = iops * dt
print("%-5s %6.0f IOPS  fio %.2f us CPU/read  %.3f moves/read  ring threads %.2f us CPU/read"
      % (sys.argv[1], iops, d(job, "exec_ms") * 1e3 / n, d(job, "migrations") / n,
         sum(d(t, "exec_ms") for t in rings) * 1e3 / n))
P
}
for _ in $(seq "$runs"); do
    for s in ${SERIES:-c-a c-b d e e-pin}; do
        case $s in
            c-a) one c-a fio --ioengine=psync --iodepth=1 ;;
            c-b) one c-b taskset -c 0 fio --ioengine=psync --iodepth=1 ;;
            d) one d fio --ioengine=io_uring --iodepth=4 ;;
            e) one e fio --ioengine=io_uring --iodepth=1 ;;
            e-pin) one e-pin taskset -c 0 fio --ioengine=io_uring --iodepth=1 ;;
            g) one g fio --ioengine=io_uring --iodepth=8 ;;
            g-pin) one g-pin taskset -c 1 fio --ioengine=io_uring --iodepth=8 ;;
            *) echo "unknown series $s" >&2; exit 2 ;;
        esac
    done
done
