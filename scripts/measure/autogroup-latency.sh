#!/usr/bin/env bash
# Measures what autogroups (a task group per setsid() session) do to the wakeup latency of a
# periodic task that shares CPU 0 with four busy loops: the task sleeps 1 ms and spins 50 us, in
# the loops' session (one group: a queue of five) or in a session of its own (two groups of equal
# weight). Latency: sched_wakeup of the task to its sched_switch in, read with bpftrace.
# Usage: scripts/measure/autogroup-latency.sh [RUNS] [SECONDS]
# Needs root, bpftrace, perl (Time::HiRes), taskset and setsid. Prints one line per run: the
# case, the wakeups, their mean latency and the share of them that waited 1 ms or more.
set -euo pipefail
runs=${1:-3}
secs=${2:-5}
periodic=$(mktemp /tmp/periodic.XXXXXX.pl)
trap 'pkill -f "$periodic" 2>/dev/null || true; pkill -f "perl -e 1 while 1" 2>/dev/null || true; rm -f "$periodic"' EXIT
cat > "$periodic" <<'EOF'
use Time::HiRes qw(time sleep);
while (1) { sleep(0.001); my $t = time + 0.00005; 1 while time < $t; }
EOF
measure() {  # $1: case name; the periodic task is the newest process running $periodic
    local pid
    pid=$(pgrep -n -f "$periodic")
    (timeout -s INT "$secs" bpftrace -e "
        tracepoint:sched:sched_wakeup /args->pid == $pid/ { @s = nsecs; }
        tracepoint:sched:sched_switch /args->next_pid == $pid && @s/ {
            \$d = (nsecs - @s) / 1000; @n = count(); @sum = sum(\$d); if (\$d >= 1000) { @long = count(); } @s = 0; }
        END { clear(@s); }" 2>/dev/null || true) |
        awk -v name="$1" '/^@n:/ {n = $2} /^@sum:/ {s = $2} /^@long:/ {l = $2}
            END { printf "%-13s %6d wakeups  mean %7.1f us  1 ms or more: %.2f%%\n", name, n, s / n, 100 * l / n }'
}
for ((r = 0; r < runs; r++)); do
    setsid bash -c "for i in 1 2 3 4; do taskset -c 0 perl -e '1 while 1' & done; taskset -c 0 perl $periodic & wait" 2>/dev/null &
    sleep 1
    measure same-session
    pkill -f "$periodic"; pkill -f "perl -e 1 while 1"; wait 2>/dev/null || true

    setsid bash -c "for i in 1 2 3 4; do taskset -c 0 perl -e '1 while 1' & done; wait" 2>/dev/null &
    setsid bash -c "taskset -c 0 perl $periodic" 2>/dev/null &
    sleep 1
    measure own-session
    pkill -f "$periodic"; pkill -f "perl -e 1 while 1"; wait 2>/dev/null || true
done
