// What a run will cost before it runs: tasks, events, memory and wall time, from the built
// workload alone. The runner refuses a set of runs whose memory is beyond a budget (--max-memory,
// default a fraction of the machine's RAM) and warns when the runs will take long.
#pragma once
#include <cstdint>
#include <string>

#include "experiment/simulation.h"

namespace wakesim {

struct RunEstimate {
    uint64_t tasks = 0;
    uint64_t channels = 0;
    uint64_t events = 0;        // simulator events, an upper estimate (0: unknown, runs until stopped)
    uint64_t memory_bytes = 0;  // peak heap of the run, an upper estimate
    double seconds = 0;         // wall time on one core, from `events`
};

// Bytes one run holds: a fixed part (engine, hardware, scheduler per CPU) plus per task, per
// shared program, per channel wait-queue slot and per barrier slot. The per-task figure was
// measured with /usr/bin/time -v (docs/robustness.md) and rounded up.
// `stop_ops`: ops after which the run stops (0: when the workload ends); `max_time`: its
// simulated-time limit (0: none).
RunEstimate estimate_run(const WorkloadBuild& w, int nr_cpus, uint64_t stop_ops, Time max_time);

// The default memory budget: half of MemTotal in /proc/meminfo (sysconf where that is missing).
uint64_t default_memory_budget();

// "1.5 GiB", "640 MiB", "12 KiB".
std::string format_bytes(uint64_t bytes);

}  // namespace wakesim
