// One run: a machine, a workload, one policy, one seed. Builds the engine, scheduler and
// workload driver, runs warm-up and the measured window, and returns the metrics.
#pragma once
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "policies/registry.h"
#include "hw/machine_profile.h"
#include "kernel/sched.h"
#include "workloads/workloads.h"
#include "topology/sched_domains.h"
#include "topology/topology.h"
#include "metrics/run_metrics.h"
#include "sim/trace.h"

namespace wakesim {

class WakeExplain;
class WakeFinder;

struct RunSpec {
    const Topology* topo = nullptr;
    const SchedDomains* domains = nullptr;
    MachineProfile profile;
    SchedConfig sched;
    Policy policy;
    WorkloadBuild workload;
    uint64_t seed = 1;
    uint64_t warmup_ops = 0;   // ops excluded from the measured window
    uint64_t stop_ops = 0;     // stop after this many ops in all (0: when the workload ends)
    Time max_time = 0;         // simulated-time limit (0: none)
    Time warmup_time = 0;      // time-based warm-up when no warm-up ops are given
    std::FILE* trace = nullptr;  // the trace (sim/trace.h), written at the end of the run
    TraceWindow trace_window;     // the simulated time the trace covers
    TraceFormat trace_format = TraceFormat::ftrace;
    uint64_t explain_wakeup = 0;
    WakeExplain* explain = nullptr;
    WakeFinder* find = nullptr;  // finds the call to explain, and stops the run there
    bool check_invariants = false;  // check scheduler invariants at the end of the run
};

struct RunResult {
    RunMetrics metrics;  // typed, by Metric (metrics/metric_table.h); JSON: metrics_json()
    uint64_t events = 0;
    uint64_t select_calls = 0;  // select_task_rq calls in the whole run, warm-up included
    Time sim_time = 0;
    bool completed = false;  // the workload finished (or reached stop_ops) before max_time
    Time ended_at = 0;           // the simulated time the run stopped at (sim_time ends at the last op)
    // The workload could not finish: every foreground task left slept until another acted (a
    // channel nobody posts, a barrier short of tasks), however busy background tasks kept the
    // CPUs, or no event was pending at all. The window ends when the last of them went to sleep
    // (or at the last event); `blocked` names the tasks and what they wait for.
    bool stuck = false;
    std::string blocked;
    uint64_t trace_entries = 0;  // events written to the trace, if one was asked for
};

RunResult run_simulation(const RunSpec& spec);

}  // namespace wakesim
