#!/usr/bin/env bash
# Measures fio 4 KiB random reads through libfuse's example/passthrough_hp (--nopassthrough, over
# tmpfs), the five series of docs/validation.md ("FUSE on this boot"):
#   a    /dev/fuse, psync iodepth 1, fio unpinned
#   b    /dev/fuse, psync iodepth 1, fio under taskset -c 0
#   c-a  fuse-over-io-uring (-o io_uring), psync iodepth 1, unpinned
#   c-b  fuse-over-io-uring, psync iodepth 1, taskset -c 0
#   d    fuse-over-io-uring, io_uring engine iodepth 4, unpinned
# Usage: scripts/measure/fuse-fio.sh PASSTHROUGH_HP [RUNS] [SECONDS]
# Needs root (mount, tmpfs), fio, and a kernel with CONFIG_FUSE_IO_URING for c and d.
# Prints one line per run: series, IOPS, clat p50 and p99 in us.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 PASSTHROUGH_HP [RUNS] [SECONDS]" >&2; exit 2; }
runs=${2:-5}
secs=${3:-10}
# shellcheck source=scripts/measure/fuse-mount.sh
. "$(dirname "$0")/fuse-mount.sh"
fuse_setup "$1"
one() {  # $1: series name, rest: command prefix and fio engine options
    local name=$1
    shift
    local out
    out=$("$@" --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 --time_based \
        --runtime="$secs" --group_reporting --output-format=json)
    python3 -c '
import json, sys
j = json.loads(sys.stdin.read())["jobs"][0]["read"]
p = j["clat_ns"]["percentile"]
print("%-4s %8.0f IOPS  clat p50 %6.1f us  p99 %6.1f us" % (sys.argv[1], j["iops"], p["50.000000"] / 1e3, p["99.000000"] / 1e3))
' "$name" <<<"$out"
}
start_fs ""
for _ in $(seq "$runs"); do one a fio --ioengine=psync --iodepth=1; done
for _ in $(seq "$runs"); do one b taskset -c 0 fio --ioengine=psync --iodepth=1; done
stop_fs
start_fs "-o io_uring"
for _ in $(seq "$runs"); do one c-a fio --ioengine=psync --iodepth=1; done
for _ in $(seq "$runs"); do one c-b taskset -c 0 fio --ioengine=psync --iodepth=1; done
for _ in $(seq "$runs"); do one d fio --ioengine=io_uring --iodepth=4; done
stop_fs
