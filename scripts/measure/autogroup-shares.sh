#!/usr/bin/env bash
# Measures how autogroups (CONFIG_SCHED_AUTOGROUP: a task group per setsid() session) divide CPU
# time between busy loops, the two cases tests/test_groups.cpp models:
#   lone   CPU 0: one session runs four busy loops, another session one. With autogroups the
#          lone loop gets half of CPU 0; without, a fifth.
#   split  session A runs a busy loop on CPU 0 and one on CPU 1, sessions B and C one each on
#          CPU 0 and CPU 1. A's shares split over its two CPUs (calc_group_shares()), so A's
#          loops get a third of their CPU each; without autogroups, a half.
# Usage: scripts/measure/autogroup-shares.sh [RUNS] [SECONDS]
# Needs two CPUs, perl, taskset and setsid (util-linux). Prints one line per run: the case, then
# each loop's share of its CPU in per cent (utime + stime from /proc/PID/stat).
set -euo pipefail
runs=${1:-3}
secs=${2:-10}
[ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)" = 1 ] ||
    echo "note: autogroups are off here (kernel.sched_autogroup_enabled), so sessions share one group" >&2
loop() { taskset -c "$1" perl -e '1 while 1'; }
export -f loop
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Samples the listed pids' CPU time over `secs`, then prints each one's share of the time all
# the listed pids got on its CPU.
report() {
    local name=$1; shift
    local -A t0=() t=() c=() cpu_total=()
    for p in "$@"; do t0[$p]=$(ticks "$p"); c[$p]=$(taskset -pc "$p" | awk '{print $NF}'); done
    sleep "$secs"
    for p in "$@"; do
        t[$p]=$(( $(ticks "$p") - ${t0[$p]} ))
        cpu_total[${c[$p]}]=$(( ${cpu_total[${c[$p]}]:-0} + ${t[$p]} ))
    done
    local line="$name"
    for p in "$@"; do
        line+=$(awk -v a="${t[$p]}" -v b="${cpu_total[${c[$p]}]}" -v cpu="${c[$p]}" 'BEGIN { printf "  cpu%s %.1f%%", cpu, 100 * a / b }')
    done
    echo "$line"
}
session_pids() { pgrep -s "$1" perl | sort -n | tr '\n' ' '; }
for ((r = 0; r < runs; r++)); do
    setsid bash -c 'for i in 1 2 3 4; do loop 0 & done; wait' 2>/dev/null &
    sleep 0.3
    four=$(ps -o sid= -p "$(pgrep -n -f 'for i in 1 2 3 4')" | tr -d ' ')
    setsid bash -c 'loop 0' 2>/dev/null &
    sleep 1  # settle: the measurement starts after every loop runs
    lone=$(pgrep -n perl)
    # shellcheck disable=SC2046
    report "lone (four-loop session, then the lone loop):" $(session_pids "$four") "$lone"
    pkill perl; wait 2>/dev/null || true

    setsid bash -c 'loop 0 & loop 1 & wait' 2>/dev/null &
    sleep 0.3
    a=$(ps -o sid= -p "$(pgrep -n -f 'loop 0 & loop 1')" | tr -d ' ')
    setsid bash -c 'loop 0' 2>/dev/null &
    setsid bash -c 'loop 1' 2>/dev/null &
    sleep 1
    others=$(pgrep perl | sort -n | grep -v -x -F -f <(pgrep -s "$a" perl) | tr '\n' ' ')
    # shellcheck disable=SC2046
    report "split (session A's two loops, then B's and C's):" $(session_pids "$a") $others
    pkill perl; wait 2>/dev/null || true
done
