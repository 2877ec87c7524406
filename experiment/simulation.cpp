#include "experiment/simulation.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "engine/engine.h"
#include "sim/counting_observer.h"
#include "sim/cpu_exec.h"
#include "sim/observer_tee.h"
#include "sim/run_control.h"
#include "sim/trace.h"
#include "sim/wake_explain.h"
#include "workloads/program/task_program.h"

namespace wakesim {

namespace {

// The run's metrics (metrics/metric_table.cpp) from the window's counters, the CPUs' busy time and
// the hardware model.
// A window that ends at the last op, before the run stopped (its tasks' exits), counts the CPUs'
// busy time up to that op.
RunMetrics window_metrics(const Metrics& m, const Scheduler& s, const CpuExec& cpus, const std::vector<Time>& busy_at_start,
                          Time start, Time end, bool at_last_op, uint64_t events) {
    RunInputs in{m, end - start, {}, {}, events};
    for (int cpu = 0; cpu < s.topo().nr_cpus(); ++cpu)
        in.busy_ns.push_back((at_last_op ? cpus.cpu_busy_at_mark(cpu) : s.cpu_busy_ns(cpu)) -
                             busy_at_start[static_cast<size_t>(cpu)]);
    in.hw = s.hardware().window_stats();
    return collect_metrics(in);
}

}  // namespace

RunResult run_simulation(const RunSpec& spec) {
    Engine engine;
    engine.reserve(1024);
    Metrics metrics;
    PolicyRun policy = spec.policy.instantiate();
    Hardware hw(engine, *spec.topo, spec.profile);
    Scheduler sched(engine, *spec.topo, *spec.domains, spec.profile, policy, spec.sched, hw, spec.seed);
    CpuExec cpus(engine, sched, hw, spec.profile, spec.seed);
    cpus.set_metrics(&metrics);
    CountingObserver counting(metrics, *spec.topo, engine);
    ObserverTee observers;
    observers.add(&counting);
    RunControl ctl;
    ProgramDriver driver(spec.workload.tasks, spec.workload.channels, spec.workload.barriers, ctl, spec.workload.timers);
    cpus.set_driver(&driver);
    std::unique_ptr<TraceSink> trace;
    if (spec.trace) {
        trace = std::make_unique<TraceSink>(spec.trace, engine, cpus, spec.topo->nr_cpus(), spec.trace_window,
                                            spec.trace_format);
        observers.add(trace.get());
        hw.set_observer(trace.get());
    }
    if (spec.explain) {
        spec.explain->attach(engine, &hw);
        observers.add(spec.explain);
        sched.set_explain(spec.explain_wakeup);
    }
    if (spec.find) {
        spec.find->attach(engine, sched);
        observers.add(spec.find);
    }
    sched.set_observer(observers.size() == 1 ? observers.only() : &observers);

    std::vector<Time> busy_at_start(static_cast<size_t>(spec.topo->nr_cpus()), 0);
    Time window_start = 0;
    uint64_t ops_at_start = 0, bytes_at_start = 0;
    bool warm = false;
    auto begin_window = [&] {
        if (warm) return;
        warm = true;
        driver.settle_all();  // a pipe's lines pulled ahead are pulled inside the window, as they would be
        metrics.reset(engine.now());
        window_start = engine.now();
        ops_at_start = ctl.ops();
        bytes_at_start = ctl.bytes();
        for (int c = 0; c < spec.topo->nr_cpus(); ++c) busy_at_start[static_cast<size_t>(c)] = sched.cpu_busy_ns(c);
        sched.hardware().begin_window();
        if (trace && (spec.warmup_ops > 0 || spec.warmup_time > 0)) trace->marker("wakesim: warm-up done");
    };
    bool stopped_by_ops = false;
    auto stop_at_ops = [&] {
        stopped_by_ops = true;
        engine.stop();
    };
    ctl.set_clock(&engine);
    cpus.set_mark(ctl.last_op_time_ptr());
    ctl.set_warmup(spec.warmup_ops, [&] { begin_window(); });
    if (spec.stop_ops && spec.warmup_time == 0) ctl.set_stop(spec.stop_ops, stop_at_ops);
    bool finished_all = false;
    Time exited_at = 0;  // when the last foreground task exited
    ctl.set_finish([&] {
        finished_all = true;
        exited_at = engine.now();
        engine.stop();
    });
    bool deadlocked = false;  // the engine stops at the event where the last foreground task slept for good
    ctl.set_deadlock([&] {
        deadlocked = true;
        engine.stop();
    });
    if (spec.warmup_ops == 0 && spec.warmup_time == 0) begin_window();
    driver.setup(cpus, 0, spec.workload.parent_cpu, spec.seed, spec.workload.fork_gap_min_ns, spec.workload.fork_gap_max_ns);

    const Time limit = spec.max_time > 0 ? spec.max_time : kTimeNever;
    if (!warm && spec.warmup_time > 0) {
        engine.run_until(std::min(spec.warmup_time, limit));
        begin_window();
        // With a time warm-up, "ops" counts from the end of warm-up.
        if (spec.stop_ops) ctl.set_stop(ctl.ops() + spec.stop_ops, stop_at_ops);
    }
    // explain stops at its call's wakee running (or, finding the call, at the call)
    if (!(spec.find && spec.find->found()) && !(spec.explain && spec.explain->stopped_run()) && !finished_all &&
        !deadlocked)
        engine.run_until(limit);
    driver.settle_all();  // nor is a pull counted that the run ended before
    // A run whose foreground tasks all exited (or that reached its ops) is complete. Its window
    // ends at the last finished op; a window without ops (a program without `op` steps, as rt-app
    // users write them) measures the time until the last task exited.
    const bool window_ops = ctl.ops() > ops_at_start;
    const bool finished = window_ops ? (stopped_by_ops || finished_all || driver.all_exited()) : finished_all;
    const bool explained = (spec.find && spec.find->found()) || (spec.explain && spec.explain->stopped_run());
    // Stuck: its tasks wait on each other (however busy background tasks keep the CPUs), or
    // nothing is left to happen at all (a wait no program step can end: a parent that never forks).
    const bool stuck = !finished && !explained && (deadlocked || (engine.pending() == 0 && !driver.all_exited()));
    Time end = engine.now();
    if (finished) end = window_ops ? ctl.last_op_time() : std::max(exited_at, window_start);
    if (stuck) end = std::max(engine.last_event_time(), window_start);
    RunResult r;
    r.completed = finished;
    r.stuck = stuck;
    if (stuck) r.blocked = driver.blocked_text();
    if (spec.check_invariants) sched.check_invariants();
    counting.flush(end);
    metrics.c.ops = ctl.ops() - ops_at_start;
    metrics.c.bytes = ctl.bytes() - bytes_at_start;
    r.events = engine.events_processed();
    r.select_calls = sched.select_calls();
    r.sim_time = end;
    const bool at_last_op = finished && window_ops && end < engine.now();  // end is the last op's time
    r.metrics = window_metrics(metrics, sched, cpus, busy_at_start, window_start, end, at_last_op, r.events);
    r.ended_at = stuck ? end : engine.now();
    if (trace) {
        trace->finish();
        r.trace_entries = trace->entries();
    }
    return r;
}

}  // namespace wakesim
