#!/usr/bin/env bash
# fio's io_uring engine at iodepth 8 (4 KiB random direct reads, 3 s, unpinned) over
# passthrough_hp -o io_uring, with the server's autogroup reniced (/proc/PID/autogroup): a nice
# below 0 gives the ring threads' group more weight than fio's. For each nice value: IOPS, and
# the maps of a bpftrace program run alongside (default bpf/ring-wake-weights.bt: are the ring
# wakes preempting fio, at which weights).
# Usage: scripts/measure/fuse-autogroup-nice.sh PASSTHROUGH_HP [NICE...]   (default: 0 -3 -5 0)
# Environment: BT (the bpftrace program), QD (iodepth, default 8).
# Switch mode: SWITCH="FROM TO" runs one 8 s fio with the server at nice FROM, renices it to TO
# after 3.6 s and prints fio's IOPS every 500 ms: does the run leave the state the first nice put
# it in? With BT set it also runs that bpftrace program, started 4 s before fio (e.g.
# bpf/ring-wake-weights-series.bt, per quarter second). With PIN_FIRST=CPU fio starts bound to
# that CPU (so the ring threads' load gathers on it) and is unbound at the renice.
# Needs root (mount, tmpfs, bpftrace), fio, kernel.sched_autogroup_enabled 1 and a kernel with
# CONFIG_FUSE_IO_URING and BTF.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 PASSTHROUGH_HP [NICE...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
bt=${BT:-$here/bpf/ring-wake-weights.bt}
hp=$1
shift
# shellcheck source=scripts/measure/fuse-mount.sh
. "$here/fuse-mount.sh"
fuse_setup "$hp"
server_pid() { pgrep -f "$hp --foreground" | head -1; }
if [ -n "${SWITCH:-}" ]; then
    read -r from to <<< "$SWITCH"
    start_fs "-o io_uring"
    echo "$from" > "/proc/$(server_pid)/autogroup"
    tracer=
    if [ -n "${BT:-}" ]; then
        bpftrace "$bt" -o "$work/bt.txt" 2>/dev/null &
        tracer=$!
        sleep 4  # bpftrace attaches
    fi
    pin=()
    [ -z "${PIN_FIRST:-}" ] || pin=(taskset -c "$PIN_FIRST")
    (cd "$work" && "${pin[@]}" fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 --time_based \
        --runtime=8 --ioengine=io_uring --iodepth="${QD:-8}" --write_iops_log=io --log_avg_msec=500 \
        --output-format=terse >/dev/null) &
    job=$!
    sleep 3.6
    echo "$to" > "/proc/$(server_pid)/autogroup"
    if [ -n "${PIN_FIRST:-}" ]; then
        for p in $(pgrep -x fio); do taskset -a -p -c "0-$(($(nproc) - 1))" "$p" >/dev/null; done
    fi
    wait "$job"
    if [ -n "$tracer" ]; then
        kill -INT "$tracer"
        wait "$tracer" || true
    fi
    echo "nice $from, then $to after 3.6 s${PIN_FIRST:+ (fio bound to CPU $PIN_FIRST until then)}: ms:IOPS"
    awk -F, '{printf "%d:%d ", $1, $2}' "$work/io_iops.1.log"
    echo
    [ -z "$tracer" ] || cat "$work/bt.txt"
    stop_fs
    exit 0
fi
for n in "${@:-0 -3 -5 0}"; do
    for nice in $n; do
        start_fs "-o io_uring"
        echo "$nice" > "/proc/$(server_pid)/autogroup"
        bpftrace "$bt" -o "$work/bt.txt" 2>/dev/null &
        tracer=$!
        sleep 4  # bpftrace attaches
        fio --name=r --filename="$mnt/f" --rw=randread --bs=4k --size=1G --direct=1 --time_based --runtime=3 \
            --ioengine=io_uring --iodepth="${QD:-8}" --output-format=json >"$work/out.json"
        kill -INT "$tracer"
        wait "$tracer" || true
        python3 -c "import json, sys; print('server autogroup nice %s: %.0f IOPS' % (sys.argv[2], json.load(open(sys.argv[1]))['jobs'][0]['read']['iops']))" "$work/out.json" "$nice"
        cat "$work/bt.txt"
        stop_fs
    done
done
