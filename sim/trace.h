// ftrace-style text output (the `nop` tracer's format) of sched events, readable by Perfetto and
// trace-cmd users: sched_waking, sched_wakeup, sched_switch, sched_migrate_task.
#pragma once
#include <cstdio>
#include <string>

#include "engine/engine.h"
#include "kernel/task.h"

namespace wakesim {

class TraceSink {
public:
    explicit TraceSink(std::FILE* out);  // not owned
    void header();
    // `cur` is the task running on `cpu` when the event is emitted (nullptr: idle).
    void waking(Time t, int cpu, const Task* cur, const Task& p, int target_cpu);
    void wakeup(Time t, int cpu, const Task* cur, const Task& p, int target_cpu);
    void migrate(Time t, int cpu, const Task* cur, const Task& p, int orig, int dest);
    void sched_switch(Time t, int cpu, const Task* prev, char prev_state, const Task* next);
    void cpu_frequency(Time t, int cpu, int64_t khz);
    void cpu_idle(Time t, int cpu, int state);  // state -1: leaving idle (4294967295)

private:
    void prefix(Time t, int cpu, const Task* cur);
    std::FILE* out_;
};

inline int trace_pid(const Task& t) { return t.id + 1000; }
inline int trace_prio(const Task& t) { return 120 + t.nice; }

}  // namespace wakesim
