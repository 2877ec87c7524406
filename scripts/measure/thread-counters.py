#!/usr/bin/env python3
"""Per-thread scheduler counters of running processes, without tracing: run it twice around an
interval and it prints the differences. For each thread whose comm matches PATTERN (a regular
expression): voluntary and involuntary context switches (/proc/PID/task/TID/status),
se.sum_exec_runtime and se.nr_migrations (/proc/PID/task/TID/sched, CONFIG_SCHED_DEBUG) and the
process's read() and write() calls and bytes (/proc/PID/io).

  thread-counters.py snap PATTERN FILE     write a snapshot (JSON) of every matching thread
  thread-counters.py diff FILE1 FILE2      print per-thread differences, with the wall time between
"""
import json
import os
import re
import sys
import time


def field(text, key):
    for line in text.splitlines():
        parts = line.replace(":", " ").split()
        if parts and parts[0] == key:
            return float(parts[-1])
    return 0.0


def snap(pattern, out):
    rx = re.compile(pattern)
    threads = {}
    t0 = time.monotonic()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            io = open(f"/proc/{pid}/io").read()
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            base = f"/proc/{pid}/task/{tid}"
            try:
                comm = open(f"{base}/comm").read().strip()
                if not rx.search(comm):
                    continue
                status = open(f"{base}/status").read()
                sched = open(f"{base}/sched").read()
            except OSError:
                continue
            threads[tid] = {
                "pid": pid, "comm": comm,
                "voluntary": field(status, "voluntary_ctxt_switches"),
                "involuntary": field(status, "nonvoluntary_ctxt_switches"),
                "exec_ms": field(sched, "se.sum_exec_runtime"),
                "migrations": field(sched, "se.nr_migrations"),
                "syscr": field(io, "syscr"), "syscw": field(io, "syscw"),
                "rchar": field(io, "rchar"), "wchar": field(io, "wchar"),
            }
    # The snapshot's time is the middle of the scan.
    json.dump({"time": (t0 + time.monotonic()) / 2, "threads": threads}, open(out, "w"))


def diff(f1, f2):
    a, b = json.load(open(f1)), json.load(open(f2))
    dt = b["time"] - a["time"]
    print(f"interval {dt:.3f} s")
    keys = ("voluntary", "involuntary", "exec_ms", "migrations", "syscr", "syscw", "wchar")
    print("tid      comm              " + " ".join(f"{k:>11}" for k in keys))
    for tid in sorted(b["threads"], key=int):
        if tid not in a["threads"]:
            continue
        x, y = a["threads"][tid], b["threads"][tid]
        print(f"{tid:<8} {y['comm']:<17} " + " ".join(f"{y[k] - x[k]:>11.0f}" for k in keys))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "snap":
        snap(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "diff":
        diff(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
