// Fills the run's Metrics (metrics/metrics.h) from the scheduler's events: every counter is an
// increment on an event (the select_task_rq ones on the placement summary that comes with a
// wakeup), and the wake latency runs from
// the wakeup to the wakee's finish_task_switch. Nothing allocates per event once every task has
// been woken once.
#pragma once
#include <vector>

#include "engine/engine.h"
#include "kernel/observer.h"
#include "metrics/metrics.h"
#include "topology/topology.h"

namespace wakesim {

class CountingObserver final : public SchedObserver {
public:
    CountingObserver(Metrics& m, const Topology& topo, const Engine& clock);

    uint32_t interests() const override {
        return kObsTtwuWoken | kObsMigrate | kObsSwitch | kObsSwitchedIn | kObsBalance | kObsReschedIpi;
    }
    void ttwu_woken(const Task& p, int cpu, int this_cpu, WokenVia via, const SelectResultEv* placement) override;
    void migrate(const Task& p, int from, int to, MigrationCause cause) override;
    void sched_switch(int cpu, const Task* prev, char prev_state, const Task* next) override;
    void switched_in(int cpu, const Task& t) override;
    void balance(int cpu, int level, bool newidle, bool moved) override;
    void resched_ipi(int /*cpu*/) override { ++m_.c.ipis; }
    // Adds the CPU time of the tasks on the CPUs now, up to `end`, to the per-role tables.
    void flush(Time end);

private:
    void start_latency_slow(size_t id);
    Metrics& m_;
    const Topology& topo_;
    const Engine& clock_;
    std::vector<Time> wake_time_;  // by task id: when its pending wakeup was issued, -1: none
    std::vector<Time> on_cpu_since_;  // by CPU: when its current task was switched in
    std::vector<int> class_of_;       // by CPU: index of its capacity in Metrics::capacities
    std::vector<int> cur_role_;       // by CPU: role_index of the task on it, -1: idle or another task
    void add_role_time(int cpu, int role, Time until);
};

}  // namespace wakesim
