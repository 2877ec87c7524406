// kernel/sched/pelt.h: the inline parts of PELT (kernel/pelt.cpp has the rest): the decay factor
// and a task's signal update, which the wake path and __schedule call for every task they touch.
#pragma once
#include <cmath>

#include "kernel/sched.h"

namespace wakesim {

// y^t with y^32 = 1/2 and t in 1024 us periods, in continuous time.
inline double Scheduler::decay(Time dt) {
    if (dt <= 0) return 1.0;
    return std::exp2(-static_cast<double>(dt) / (32.0 * 1024.0 * 1000.0));
}

inline void Scheduler::pelt_update_task(Task& t, bool running, bool runnable) {
    const Time now = engine_.now();
    const double d = decay(now - t.pelt.last_update);
    const double spd = t.cpu >= 0 ? hw_.invariant_speed(t.cpu) : 1.0;
    t.pelt.util_avg = t.pelt.util_avg * d + (running ? 1024.0 * spd * (1.0 - d) : 0.0);
    t.pelt.load_avg = t.pelt.load_avg * d + (runnable ? t.weight * (1.0 - d) : 0.0);
    t.pelt.last_update = now;
}

}  // namespace wakesim
