#!/usr/bin/env bash
# CPU time per read of fio and of passthrough_hp's ring threads over fuse-over-io-uring, unpinned
# (c-a) and under taskset -c 0 (c-b), from /proc counters over 3 s of each 6 s run (no tracing,
# which changes how often fio moves). Each c-a run also gives fio's moves per read; across runs,
# CPU per read grows linearly with them, and the slope is what one move costs (docs/validation.md).
# Usage: scripts/measure/fuse-cpu-per-read.sh PASSTHROUGH_HP [RUNS]
# Needs root (mount, tmpfs), fio, and a kernel with CONFIG_FUSE_IO_URING.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/measure/fuse-mount.sh
. "$here/fuse-mount.sh"
fuse_script_start "$@"
start_fs "-o io_uring"
one() {  # $1: series name, rest: command prefix
    local name=$1
    shift
    "$@" fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 --time_based \
        --runtime=6 --ioengine=psync --iodepth=1 --output-format=terse >/dev/null &
    local job=$!
    sleep 1.5
    "$here/thread-counters.py" snap '^(fio|fuse-ring-[0-9]+)$' "$work/s1"
    sleep 3
    "$here/thread-counters.py" snap '^(fio|fuse-ring-[0-9]+)$' "$work/s2"
    while kill -0 "$job" 2>/dev/null; do sleep 0.2; done
    python3 - "$name" "$work/s1" "$work/s2" <<'P'
import json, sys
a, b = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
dt = b["time"] - a["time"]
common = [t for t in b["threads"] if t in a["threads"]]
d = lambda t, k: b["threads"][t][k] - a["threads"][t][k]
job = max((t for t in common if b["threads"][t]["comm"] == "fio"), key=lambda t: d(t, "syscr"))
reads = d(job, "syscr")
rings = [t for t in common if b["threads"][t]["comm"].startswith("fuse-ring")]
print("%-4s %7.0f reads/s  fio: %.2f us CPU/read, %.3f moves/read  ring threads: %.2f us CPU/read"
      % (sys.argv[1], reads / dt, d(job, "exec_ms") * 1e3 / reads, d(job, "migrations") / reads,
         sum(d(t, "exec_ms") for t in rings) * 1e3 / reads))
P
}
for _ in $(seq "$runs"); do
    one c-a
    one c-b taskset -c 0
done
