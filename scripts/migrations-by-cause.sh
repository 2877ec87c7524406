#!/usr/bin/env bash
# Counts a real run's task migrations by cause, to set beside wakesim's migrations.wakeup /
# migrations.balance / migrations.fork: records sched:sched_migrate_task with kernel call chains
# and classifies each by the first scheduler function on its stack (try_to_wake_up: wakeup
# placement; wake_up_new_task or sched_exec: fork/exec; sched_balance_*/load_balance/detach_tasks:
# the load balancer; migration_cpu_stop/active_load_balance_cpu_stop: the stopper).
# Usage: scripts/migrations-by-cause.sh COMMAND [ARGS...]
#   e.g. scripts/migrations-by-cause.sh perf bench sched messaging -t -p -g 1 -l 1000
# Needs perf and permission to trace (root, or kernel.perf_event_paranoid <= 1).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
data=$(mktemp /tmp/migrations.XXXXXX.data)
trap 'rm -f "$data"' EXIT
perf record -q -e sched:sched_migrate_task -g -o "$data" -- "$@" >/dev/null 2>&1
perf script -i "$data" 2>/dev/null | awk '
  /sched:sched_migrate_task:/ { if (inev) count(); inev = 1; cause = ""; next }
  inev && cause == "" {
    if ($0 ~ /try_to_wake_up/) cause = "wakeup"
    else if ($0 ~ /wake_up_new_task|sched_exec/) cause = "fork"
    else if ($0 ~ /migration_cpu_stop|active_load_balance_cpu_stop|stop_one_cpu/) cause = "active_balance"
    else if ($0 ~ /sched_balance_|load_balance|detach_task|newidle_balance|run_rebalance_domains/) cause = "balance"
  }
  /^$/ { if (inev) count(); inev = 0 }
  function count() { n[cause == "" ? "other" : cause]++; total++; inev = 0 }
  END {
    if (inev) count()
    printf "migrations %d:", total
    split("wakeup fork balance active_balance other", order, " ")
    for (i = 1; i <= 5; i++) printf " %s %d", order[i], n[order[i]] + 0
    printf "\n"
  }'
