// ftrace text output of sched and power events, as the `nop` tracer's `trace` file prints them
// with the `record-tgid` option: sched_waking, sched_wakeup, sched_wakeup_new, sched_switch,
// sched_migrate_task from the scheduler's observer events, cpu_frequency and cpu_idle from the
// hardware's, and tracing_mark_write markers. Perfetto's systrace text importer reads it
// (docs/metrics.md, Trace). Lines go to a temporary file until finish(), because the header
// carries the number of entries.
#pragma once
#include <cstdint>
#include <cstdio>

#include "engine/engine.h"
#include "hw/hw_observer.h"
#include "kernel/observer.h"
#include "kernel/task.h"

namespace wakesim {

class CpuExec;

// Which simulated time a trace covers: events at `from` <= t < `to`.
struct TraceWindow {
    Time from = 0;
    Time to = kTimeNever;
};

class TraceSink final : public SchedObserver, public HwObserver {
public:
    // `out` is not owned; `exec` gives the context (the task running driver code, or none) of
    // events that happen on the wake path. Throws std::runtime_error when no temporary file can
    // be created.
    TraceSink(std::FILE* out, const Engine& clock, const CpuExec& exec, int nr_cpus, TraceWindow window = {});
    ~TraceSink() override;
    TraceSink(const TraceSink&) = delete;
    TraceSink& operator=(const TraceSink&) = delete;

    // Writes the header (with the entry count) and the buffered lines to `out`.
    void finish();
    // A trace_marker write, as Perfetto's systrace instant event "I|TGID|text", by the task whose
    // code runs now (else the idle task of CPU 0).
    void marker(const char* text);
    uint64_t entries() const { return entries_; }

    // SchedObserver
    uint32_t interests() const override { return kObsTtwuWaking | kObsTtwuWakeup | kObsMigrate | kObsSwitch; }
    void ttwu_waking(const Task& p, const Task* waker, int this_cpu) override;
    void ttwu_wakeup(const Task& p, int cpu, const Task* curr) override;
    void wakeup_new(const Task& p, int parent_cpu, const Task* parent_curr) override;
    void migrate(const Task& p, int from, int to, MigrationCause cause) override;
    void sched_switch(int cpu, const Task* prev, char prev_state, const Task* next) override;

    // HwObserver
    void cpu_frequency(Time t, int cpu, int64_t khz) override;
    void cpu_idle(Time t, int cpu, int state) override;  // state -1: leaving idle (4294967295)

private:
    // The context columns of a line; false (nothing written) outside the window. `cur` is the task
    // running on `cpu` when the event is emitted (nullptr: idle).
    bool prefix(Time t, int cpu, const Task* cur);
    std::FILE* out_;
    std::FILE* body_;
    const Engine& clock_;
    const CpuExec& exec_;
    int nr_cpus_;
    TraceWindow window_;
    uint64_t entries_ = 0;
};

inline int trace_pid(const Task& t) { return t.id + 1000; }
inline int trace_prio(const Task& t) { return 120 + t.nice; }

}  // namespace wakesim
