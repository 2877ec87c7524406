// kernel/sched/pelt.c in continuous-time form (y^32 = 1/2 over 1024 us periods): the CPU signal
// (the task's and the decay are inline in kernel/pelt.h); then fair.c's readers of the signals:
// cpu_util(), cpu_load(), task_util_est(), task_h_load(), task_fits_cpu().
#include <algorithm>

#include "kernel/pelt.h"
#include "kernel/sched.h"

namespace wakesim {

namespace {

// Weight of the entities that count as runnable for load (delayed-dequeue sleepers do not).
double runnable_weight_of(const std::vector<Task*>& queue) {
    double w = 0;
    for (const Task* t : queue)
        if (!t->sched_delayed) w += t->weight;
    return w;
}

}  // namespace

void Scheduler::pelt_update_cpu(int cpu) {
    Rq& rq = rq_of(cpu);
    const Time now = engine_.now();
    const double d = decay(now - rq.pelt.last_update);
    const double runnable_weight = runnable_weight_of(rq.queue);
    const bool busy = rq.curr != nullptr;
    rq.pelt.util_avg = rq.pelt.util_avg * d + (busy ? 1024.0 * hw_.invariant_speed(cpu) * (1.0 - d) : 0.0);
    rq.pelt.load_avg = rq.pelt.load_avg * d + runnable_weight * (1.0 - d);
    rq.pelt.last_update = now;
}

double Scheduler::cpu_util(int cpu) const {
    const Rq& rq = rq_of(cpu);
    const double d = decay(engine_.now() - rq.pelt.last_update);
    double u = rq.pelt.util_avg * d + (rq.curr ? 1024.0 * hw_.invariant_speed(cpu) * (1.0 - d) : 0.0);
    return std::min<double>(u, capacity_of(cpu));
}

double Scheduler::cpu_load(int cpu) const {
    const Rq& rq = rq_of(cpu);
    const double d = decay(engine_.now() - rq.pelt.last_update);
    return rq.pelt.load_avg * d + runnable_weight_of(rq.queue) * (1.0 - d);
}

double Scheduler::task_util(const Task& t) const {
    const double d = decay(engine_.now() - t.pelt.last_update);
    const bool running = t.state == TaskState::running;
    double u = t.pelt.util_avg * d + (running ? 1024.0 * (1.0 - d) : 0.0);
    return cfg_.features.on(Feat::UTIL_EST) ? std::max(u, t.pelt.util_est) : u;
}

// task_h_load() without cgroups: a sleeping wakee's load as last updated (when it went to sleep);
// the wake path does not sync it before wake_affine_weight().
double Scheduler::task_load(const Task& t) const {
    if (t.state == TaskState::sleeping || t.state == TaskState::waking) return t.pelt.load_avg;
    const double d = decay(engine_.now() - t.pelt.last_update);
    const bool runnable = t.state == TaskState::running || t.state == TaskState::runnable;
    return t.pelt.load_avg * d + (runnable ? t.weight * (1.0 - d) : 0.0);
}

// util_fits_cpu() without uclamp: fits_capacity(util, capacity) = util < 80% of capacity.
bool Scheduler::task_fits_cpu(const Task& t, int cpu) const {
    return task_util(t) * 1280.0 < capacity_of(cpu) * 1024.0;
}

}  // namespace wakesim
