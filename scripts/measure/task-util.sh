#!/usr/bin/env bash
# Samples the kernel's PELT signals of running threads without tracing them: every INTERVAL
# seconds, for each thread whose comm matches PATTERN (an extended regex), prints its
# se.avg.util_avg, se.avg.util_est and se.nr_migrations from /proc/PID/task/TID/sched
# (CONFIG_SCHED_DEBUG). Reading /proc costs the measured tasks nothing, unlike a tracepoint.
# Usage: scripts/measure/task-util.sh PATTERN SAMPLES [INTERVAL]
#   e.g. perf bench sched pipe -l 300000 & scripts/measure/task-util.sh '^sched-pipe$' 6 0.7
#        (fio ... &) ; scripts/measure/task-util.sh '^(fio|fuse-ring-[0-9]+)$' 4 0.5
# One line per sample: the time, then comm:tid util_avg/util_est/nr_migrations per thread.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 PATTERN SAMPLES [INTERVAL]" >&2; exit 2; }
pattern=$1
samples=$2
interval=${3:-0.5}
for _ in $(seq "$samples"); do
    line=$(date +%T.%N | cut -c1-12)
    for dir in /proc/[0-9]*/task/[0-9]*; do
        comm=$(cat "$dir/comm" 2>/dev/null) || continue
        [[ $comm =~ $pattern ]] || continue
        vals=$(awk '$1 == "se.avg.util_avg" {u = $3} $1 == "se.avg.util_est" {e = $3}
                    $1 == "se.nr_migrations" {m = $3} END {print u "/" e "/" m}' "$dir/sched" 2>/dev/null) || continue
        line="$line ${comm}:${dir##*/} $vals"
    done
    echo "$line"
    sleep "$interval"
done
