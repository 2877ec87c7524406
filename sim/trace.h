// ftrace-style text output (the `nop` tracer's format) of sched and power events, readable by
// Perfetto and trace-cmd users: sched_waking, sched_wakeup, sched_switch, sched_migrate_task from
// the scheduler's observer events, cpu_frequency and cpu_idle from the hardware's.
#pragma once
#include <cstdio>

#include "engine/engine.h"
#include "hw/hw_observer.h"
#include "kernel/observer.h"
#include "kernel/task.h"

namespace wakesim {

class CpuExec;

class TraceSink final : public SchedObserver, public HwObserver {
public:
    // `out` is not owned; `exec` gives the context (the task running driver code, or none) of
    // events that happen on the wake path.
    TraceSink(std::FILE* out, const Engine& clock, const CpuExec& exec);
    void header();

    // SchedObserver
    uint32_t interests() const override { return kObsTtwuWaking | kObsTtwuWakeup | kObsMigrate | kObsSwitch; }
    void ttwu_waking(const Task& p, const Task* waker, int this_cpu) override;
    void ttwu_wakeup(const Task& p, int cpu, const Task* curr) override;
    void migrate(const Task& p, int from, int to, MigrationCause cause) override;
    void sched_switch(int cpu, const Task* prev, char prev_state, const Task* next) override;

    // HwObserver
    void cpu_frequency(Time t, int cpu, int64_t khz) override;
    void cpu_idle(Time t, int cpu, int state) override;  // state -1: leaving idle (4294967295)

private:
    // `cur` is the task running on `cpu` when the event is emitted (nullptr: idle).
    void prefix(Time t, int cpu, const Task* cur);
    std::FILE* out_;
    const Engine& clock_;
    const CpuExec& exec_;
};

inline int trace_pid(const Task& t) { return t.id + 1000; }
inline int trace_prio(const Task& t) { return 120 + t.nice; }

}  // namespace wakesim
