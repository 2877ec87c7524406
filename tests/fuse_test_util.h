// A program workload's run (FUSE or not) as experiment/simulation.cpp builds it, kept whole so
// that a test can watch the scheduler (an observer set before run()) and read the transport's own
// counts (FuseConn::stats), the scheduler's tasks and the CPUs' busy time afterwards.
#pragma once
#include "engine/engine.h"
#include "experiment/runner.h"
#include "hw/hardware.h"
#include "kernel/sched.h"
#include "sim/cpu_exec.h"
#include "sim/run_control.h"
#include "sim_test_util.h"
#include "workloads/fuse/fuse_conn.h"
#include "workloads/program/task_program.h"

namespace wakesim::testutil {

class FuseSim {
public:
    explicit FuseSim(const json& d)
        : sc_(parse_scenario(d, "test.json")),
          spec_(make_run_spec(sc_, sc_.cases.front(), sc_.policies.front(), sc_.seeds.front())),
          policy_(spec_.policy.instantiate()),
          hw_(engine, *spec_.topo, spec_.profile),
          sched(engine, *spec_.topo, *spec_.domains, spec_.profile, policy_, spec_.sched, hw_, spec_.seed),
          cpus_(engine, sched, hw_, spec_.profile, spec_.seed),
          driver(spec_.workload.tasks, spec_.workload.channels, spec_.workload.barriers, ctl) {
        ctl.set_clock(&engine);
        cpus_.set_driver(&driver);
        ctl.set_finish([this] { engine.stop(); });
        driver.setup(cpus_, 0, spec_.workload.parent_cpu, spec_.seed, spec_.workload.fork_gap_min_ns,
                     spec_.workload.fork_gap_max_ns);
    }
    // Runs until every requester has exited (limit 0) or until `limit`; checks the invariants.
    void run(Time limit = 0) {
        engine.run_until(limit > 0 ? limit : kTimeNever);
        sched.check_invariants();
    }
    const CpuExec& cpus() const { return cpus_; }
    const Hardware& hw() const { return hw_; }
    // The workload's first FUSE connection.
    const FuseConn& conn() const {
        int ch = 0;
        while (driver.fuse_conn(ch) == nullptr) ++ch;
        return *driver.fuse_conn(ch);
    }

private:
    Scenario sc_;
    RunSpec spec_;

public:
    Engine engine;

private:
    PolicyRun policy_;
    Hardware hw_;

public:
    Scheduler sched;

private:
    CpuExec cpus_;

public:
    RunControl ctl;
    ProgramDriver driver;
};

// The task named `comm` of a simulation; fails the test when there is none.
inline const Task& task_named(const FuseSim& sim, const std::string& comm) {
    for (int i = 0; i < sim.sched.nr_tasks(); ++i)
        if (sim.sched.task(i).comm == comm) return sim.sched.task(i);
    FAIL("no task " << comm);
    return sim.sched.task(0);
}

// A flag of the root domain that lags the state it stands for (set at once, cleared only by a
// later event), sampled every `step` from `from` to `to`: how many samples had it set, how many
// of those had the state false, and how many samples after its first set had it clear.
struct FlagLag {
    int set = 0, set_without_state = 0, cleared_after_set = 0;
};
template <class Flag, class State>
FlagLag sample_flag_lag(FuseSim& sim, Time from, Time to, Time step, Flag flag, State state) {
    FlagLag n;
    bool was_set = false;
    for (Time t = from; t <= to; t += step) {
        sim.engine.run_until(t);
        const bool f = flag(), st = state();
        n.set += f;
        if (f && !st) ++n.set_without_state;
        if (was_set && !f) ++n.cleared_after_set;
        was_set = was_set || f;
    }
    return n;
}

}  // namespace wakesim::testutil
