#!/usr/bin/env bash
# bonnie++'s utilisation while it creates files over fuse-over-io-uring: the create phase of
# `bonnie++ -s0 -n 20:1:1:20` on passthrough_hp -o io_uring, with bpf/bonnie-util.bt printing
# bonnie++'s util_avg, its vCPU's, and its switch-outs and moves every 100 ms from its exec.
# Usage: scripts/measure/fuse-bonnie-util.sh PASSTHROUGH_HP [RUNS [PREFIX...]]
#   PREFIX: a command bonnie++ runs under, e.g. taskset -c 0 (default: none, unpinned).
# Needs root (mount, tmpfs, bpftrace with tracefs mounted), bonnie++, CONFIG_FUSE_IO_URING.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/measure/fuse-mount.sh
. "$here/fuse-mount.sh"
fuse_script_start "${@:1:2}"
shift $(( $# < 2 ? $# : 2 ))
ulimit -l unlimited 2>/dev/null || true
start_fs "-o io_uring"
for run in $(seq "$runs"); do
    mkdir -p "$mnt/b"
    bpftrace "$here/bpf/bonnie-util.bt" > "$work/trace" 2>/dev/null &
    bt=$!
    sleep 3  # bpftrace attaches
    "$@" bonnie++ -q -u root -s0 -n 20:1:1:20 -d "$mnt/b" >/dev/null 2>&1 || true
    wait "$bt" || true
    rm -rf "${mnt:?}/b"
    echo "run $run${*:+ (under $*)}"
    grep ' ms ' "$work/trace" || echo "no trace (bpftrace failed?)"
done
stop_fs
