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

double round6(double v) { return std::round(v * 1e6) / 1e6; }

nlohmann::json metrics_json(const Metrics& m, const Scheduler& s, const std::vector<Time>& busy_at_start,
                            Time start, Time end, uint64_t events) {
    const Counters& c = m.c;
    const Time window = end - start;
    nlohmann::json j;
    j["ops"] = c.ops;
    j["sim_time_ns"] = window;
    j["usec_per_op"] = c.ops ? round6(static_cast<double>(window) / 1000.0 / static_cast<double>(c.ops)) : 0.0;
    j["ops_per_sec"] = window > 0 ? round6(static_cast<double>(c.ops) * 1e9 / static_cast<double>(window)) : 0.0;
    j["mib_per_sec"] = window > 0 ? round6(static_cast<double>(c.bytes) * 1e9 / static_cast<double>(window) / 1048576.0) : 0.0;
    j["wakeups"] = c.wakeups;
    j["wakeups.local"] = c.wakeups_local;
    j["wakeups.remote"] = c.wakeups_remote;
    j["wakeups.ipi"] = c.wakeups_ipi;
    j["wakeups.poll"] = c.wakeups_poll;
    j["wakeups.no_placement"] = c.wakeups_runnable;
    j["wakeups.affine"] = c.wakeups_affine;
    j["wakeups.wide"] = c.wake_wide;
    j["migrations"] = c.migrations();
    j["migrations.wakeup"] = c.migrations_by_cause[static_cast<size_t>(MigrationCause::wakeup)];
    j["migrations.balance"] = c.migrations_by_cause[static_cast<size_t>(MigrationCause::balance)];
    j["migrations.newidle"] = c.migrations_by_cause[static_cast<size_t>(MigrationCause::newidle)];
    j["migrations.active"] = c.migrations_by_cause[static_cast<size_t>(MigrationCause::active)];
    static const char* dist[] = {"same_cpu", "smt", "cluster", "llc", "cross_llc", "cross_numa"};
    for (size_t d = 1; d < 6; ++d) j[std::string("migrations.") + dist[d]] = c.migrations_by_distance[d];
    j["migrations_per_wakeup"] =
        c.wakeups ? round6(static_cast<double>(j["migrations.wakeup"].get<uint64_t>()) / static_cast<double>(c.wakeups)) : 0.0;
    j["wake_latency_ns.p50"] = m.wake_latency.percentile(0.50);
    j["wake_latency_ns.p90"] = m.wake_latency.percentile(0.90);
    j["wake_latency_ns.p99"] = m.wake_latency.percentile(0.99);
    j["wake_latency_ns.mean"] = round6(m.wake_latency.mean());
    j["wake_latency_ns.max"] = m.wake_latency.max();
    j["context_switches"] = c.context_switches;
    j["preemptions"] = c.preemptions;
    j["ipis"] = c.ipis;
    j["sis_probes"] = c.sis_probes;
    j["balance_runs"] = c.balance_runs;
    j["newidle_runs"] = c.newidle_runs;
    for (size_t o = 0; o < static_cast<size_t>(SelectOutcome::kCount); ++o)
        j[std::string("select.") + to_string(static_cast<SelectOutcome>(o))] = c.outcomes[o];
    nlohmann::json util = nlohmann::json::array();
    double sum = 0;
    int busy_cpus = 0;
    for (int cpu = 0; cpu < s.topo().nr_cpus(); ++cpu) {
        const double u = window > 0 ? static_cast<double>(s.cpu_busy_ns(cpu) - busy_at_start[static_cast<size_t>(cpu)]) /
                                          static_cast<double>(window)
                                    : 0.0;
        util.push_back(round6(u));
        sum += u;
        busy_cpus += u > 0.05 ? 1 : 0;
    }
    j["cpu_util"] = util;
    j["cpu_util.sum"] = round6(sum);
    j["cpus_busy"] = busy_cpus;
    j["time_lost.wake_latency_ns"] = static_cast<int64_t>(std::llround(m.wake_latency.mean() * static_cast<double>(m.wake_latency.count())));
    s.hardware().report(j);
    j["events"] = events;
    return j;
}

}  // namespace

RunResult run_simulation(const RunSpec& spec) {
    Engine engine;
    engine.reserve(1024);
    Metrics metrics;
    Hardware hw(engine, *spec.topo, spec.profile);
    Scheduler sched(engine, *spec.topo, *spec.domains, spec.profile, spec.policy, spec.sched, hw, spec.seed);
    CpuExec cpus(engine, sched, hw, spec.profile, spec.seed);
    CountingObserver counting(metrics, *spec.topo, engine);
    ObserverTee observers;
    observers.add(&counting);
    RunControl ctl;
    ProgramDriver driver(spec.workload.tasks, spec.workload.channels, spec.workload.barriers, ctl);
    cpus.set_driver(&driver);
    std::unique_ptr<TraceSink> trace;
    if (spec.trace) {
        trace = std::make_unique<TraceSink>(spec.trace, engine, cpus);
        trace->header();
        observers.add(trace.get());
        hw.set_observer(trace.get());
    }
    if (spec.explain) {
        observers.add(spec.explain);
        sched.set_explain(spec.explain_wakeup);
    }
    sched.set_observer(observers.size() == 1 ? observers.only() : &observers);

    std::vector<Time> busy_at_start(static_cast<size_t>(spec.topo->nr_cpus()), 0);
    Time window_start = 0;
    uint64_t ops_at_start = 0, bytes_at_start = 0;
    bool warm = false;
    auto begin_window = [&] {
        if (warm) return;
        warm = true;
        metrics.reset();
        window_start = engine.now();
        ops_at_start = ctl.ops();
        bytes_at_start = ctl.bytes();
        for (int c = 0; c < spec.topo->nr_cpus(); ++c) busy_at_start[static_cast<size_t>(c)] = sched.cpu_busy_ns(c);
        sched.hardware().begin_window();
    };
    bool stopped_by_ops = false;
    auto stop_at_ops = [&] {
        stopped_by_ops = true;
        engine.stop();
    };
    ctl.set_clock(&engine);
    ctl.set_warmup(spec.warmup_ops, [&] { begin_window(); });
    if (spec.stop_ops && spec.warmup_time == 0) ctl.set_stop(spec.stop_ops, stop_at_ops);
    bool finished_all = false;
    ctl.set_finish([&] {
        finished_all = true;
        engine.stop();
    });
    if (spec.warmup_ops == 0 && spec.warmup_time == 0) begin_window();
    driver.setup(cpus, 0, spec.workload.parent_cpu, spec.seed);

    const Time limit = spec.max_time > 0 ? spec.max_time : kTimeNever;
    if (!warm && spec.warmup_time > 0) {
        engine.run_until(std::min(spec.warmup_time, limit));
        begin_window();
        // With a time warm-up, "ops" counts from the end of warm-up.
        if (spec.stop_ops) ctl.set_stop(ctl.ops() + spec.stop_ops, stop_at_ops);
    }
    engine.run_until(limit);
    // The window ends at the last finished op when the workload ran to completion, else at the limit.
    const bool finished = (stopped_by_ops || finished_all || driver.all_exited()) && ctl.ops() > ops_at_start;
    const Time end = finished ? ctl.last_op_time() : engine.now();
    RunResult r;
    r.completed = finished;
    if (spec.check_invariants) sched.check_invariants();
    metrics.c.ops = ctl.ops() - ops_at_start;
    metrics.c.bytes = ctl.bytes() - bytes_at_start;
    r.events = engine.events_processed();
    r.sim_time = end;
    r.metrics = metrics_json(metrics, sched, busy_at_start, window_start, end, r.events);
    return r;
}

}  // namespace wakesim
