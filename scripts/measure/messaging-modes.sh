#!/usr/bin/env bash
# perf bench sched messaging -t -p -g 1 (20 senders, 20 receivers) in steady state, in three
# placements, measured from /proc counters over 1 s (no tracing, which changes the regime):
#   free   unpinned
#   one    every worker under taskset -p -c A once the run has started
#   split  senders on CPU A, receivers on CPU B (taskset -p per thread)
# Prints messages/s and, per message, receiver sleeps, sender preemptions and each side's CPU.
# Usage: scripts/measure/messaging-modes.sh [RUNS] [A B]     (needs perf; 2-CPU default 0 1)
set -euo pipefail
runs=${1:-3}
a=${2:-0}
b=${3:-1}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/messaging-modes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
one_run() {  # $1: mode
    perf bench sched messaging -t -p -g 1 -l 100000 >/dev/null 2>&1 &
    local bench=$!
    sleep 1
    local pid
    pid=$(pgrep -P "$bench" -f "sched messaging" || echo "$bench")
    mapfile -t tids < <(ls "/proc/$pid/task" | sort -n)
    local workers=("${tids[@]:1}")  # the main thread first, then 20 receivers, then 20 senders
    for i in "${!workers[@]}"; do
        case $1 in
            split) if [ "$i" -lt 20 ]; then taskset -p -c "$b" "${workers[$i]}"; else taskset -p -c "$a" "${workers[$i]}"; fi ;;
            one) taskset -p -c "$a" "${workers[$i]}" ;;
        esac >/dev/null
    done
    sleep 0.5
    "$here/thread-counters.py" snap '^sched-messaging$' "$tmp/s1"
    sleep 1
    "$here/thread-counters.py" snap '^sched-messaging$' "$tmp/s2"
    kill "$bench" 2>/dev/null || true
    sleep 0.5
    python3 - "$1" "$tmp/s1" "$tmp/s2" <<'P'
import json, sys
a, b = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
dt = b["time"] - a["time"]
tids = sorted((t for t in b["threads"] if t in a["threads"]), key=int)[1:]
rec, snd = tids[:20], tids[20:40]
d = lambda t, k: b["threads"][t][k] - a["threads"][t][k]
msgs = (b["threads"][tids[0]]["wchar"] - a["threads"][tids[0]]["wchar"]) / 100  # process-wide bytes written
print("%-5s %9.0f msgs/s  receiver sleeps %.4f/msg  sender preemptions %.4f/msg  cpu us/msg: receivers %.3f senders %.3f"
      % (sys.argv[1], msgs / dt, sum(d(t, "voluntary") for t in rec) / msgs, sum(d(t, "involuntary") for t in snd) / msgs,
         sum(d(t, "exec_ms") for t in rec) * 1e3 / msgs, sum(d(t, "exec_ms") for t in snd) * 1e3 / msgs))
P
}
for _ in $(seq "$runs"); do
    for mode in free one split; do one_run "$mode"; done
done
