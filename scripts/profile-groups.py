#!/usr/bin/env python3
"""Self cost of a callgrind profile grouped as docs/performance.md groups it.

Usage: scripts/profile-groups.py callgrind.out [round_trips]
Reads `callgrind_annotate --threshold=100 --auto=no` output; a function counts toward the first
group whose pattern matches its name (code the compiler inlined counts toward its caller). From a
build with `-g`, callgrind names each piece's source file too, so PELT's code inlined from
kernel/pelt.h counts as PELT wherever it runs."""
import re
import subprocess
import sys

GROUPS = [
    ("event queue", r"wakesim::Engine::"),
    ("CPU execution model", r"wakesim::CpuExec::|__ceil"),
    ("PELT", r"pelt|exp2|wakesim::Scheduler::(cpu_util|cpu_load|task_util|task_load|task_fits_cpu)\b"),
    ("EEVDF", r"wakesim::Scheduler::(update_curr|enqueue|dequeue|pick_eevdf|place_entity|avg_vruntime|"
              r"entity_eligible|check_preempt_wakeup_fair)\b|__divti3"),
    ("wake path", r"wakesim::Scheduler::(try_to_wake_up|select_task_rq|select_idle|ttwu_|wake_affine|wake\(|"
                  r"sched_ttwu_pending|record_wakee|wake_wide|set_task_cpu)"),
    ("scheduler core", r"wakesim::Scheduler::"),
    ("hardware model", r"wakesim::Hardware::|wakesim::Topology::|__popcount|exp@@|__ieee754_exp"),
    ("task-program interpreter", r"wakesim::ProgramDriver::|wakesim::Pipe|wakesim::Channel"),
    ("FUSE connection", r"wakesim::Fuse"),
    ("metrics and observers", r"Observer|Histogram|wakesim::Metrics"),
    ("policies", r"wakesim::.*Policy|wakesim::PolicyRun"),
]


def main():
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", sys.argv[1]], capture_output=True, text=True,
                         check=True).stdout
    total = 0
    sums = {g: 0 for g, _ in GROUPS}
    other = 0
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S.*)$", line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        name = re.sub(r" \[[^\]]*\]$", "", m.group(2))  # the object file, not part of the name
        if "PROGRAM TOTALS" in name:
            total = n
            continue
        for g, pat in GROUPS:
            if re.search(pat, name):
                sums[g] += n
                break
        else:
            other += n
    rt = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    print(f"total {total / 1e9:.3f} G" + (f", {total / rt:.0f} per round trip" if rt else ""))
    for g, _ in sorted(GROUPS, key=lambda x: -sums[x[0]]):
        per = f" {sums[g] / rt:7.0f}/rt" if rt else ""
        print(f"{g:28s} {sums[g] / 1e9:7.3f} G {100 * sums[g] / total:5.1f}%{per}")
    print(f"{'start-up and other':28s} {other / 1e9:7.3f} G {100 * other / total:5.1f}%")


if __name__ == "__main__":
    main()
