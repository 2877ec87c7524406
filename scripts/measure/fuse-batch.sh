#!/usr/bin/env bash
# libfuse's reply batching, measured: fio 4 KiB random reads on fuse-over-io-uring through two
# builds of libfuse's example/passthrough_hp (--nopassthrough, over tmpfs), interleaved:
#   STOCK       libfuse 3.18 or later: a ring thread's replies to one round of CQEs go out in
#               one io_uring_enter (docs/validation.md, "libfuse's reply batching")
#   ONE_SUBMIT  the same source with one io_uring_submit per reply (libfuse 3.17's behaviour).
#               In lib/fuse_uring.c, fuse_uring_commit_sqe(), drop the cqe_processing test in front
#               of io_uring_submit(), e.g.
#                 sed -i 's/^\tif (!atomic_load_explicit(&queue->cqe_processing, memory_order_relaxed))$/\tif (1)/' lib/fuse_uring.c
#               then build it as the stock one (meson, buildtype debugoptimized).
# Series per build: io_uring iodepth 4 under taskset -c 0, the same unpinned, psync under
# taskset -c 0, io_uring iodepth 8 under taskset -c 0.
# Usage: scripts/measure/fuse-batch.sh STOCK ONE_SUBMIT [RUNS]
# Needs root (mount, tmpfs), fio, and a kernel with CONFIG_FUSE_IO_URING.
# Prints one line per run: build, series, IOPS, and fio's context switches per read.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 STOCK/passthrough_hp ONE_SUBMIT/passthrough_hp [RUNS]" >&2; exit 2; }
stock=$1
single=$2
runs=${3:-3}
# shellcheck source=scripts/measure/fuse-mount.sh
. "$(dirname "$0")/fuse-mount.sh"
fuse_setup "$stock"
one() {  # $1: label, $2: command prefix ("" or "taskset -c 0"), $3: ioengine, $4: iodepth
    local out
    # shellcheck disable=SC2086
    out=$($2 fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 --time_based \
        --runtime=4 --ioengine="$3" --iodepth="$4" --output-format=json)
    python3 -c '
import json, sys
j = json.loads(sys.stdin.read())["jobs"][0]
print("%-32s %8.0f IOPS  fio switches/read %.2f" % (sys.argv[1], j["read"]["iops"], j["ctx"] / j["read"]["total_ios"]))
' "$1" <<<"$out"
}
for _ in $(seq "$runs"); do
    for build in stock single; do
        hp=$stock  # start_fs (fuse-mount.sh) mounts "$hp" and fails if it does not mount
        [ "$build" = single ] && hp=$single
        start_fs "-o io_uring"
        one "$build io_uring qd4 taskset -c 0" "taskset -c 0" io_uring 4
        one "$build io_uring qd4 unpinned" "" io_uring 4
        one "$build psync taskset -c 0" "taskset -c 0" psync 1
        one "$build io_uring qd8 taskset -c 0" "taskset -c 0" io_uring 8
        stop_fs
    done
done
