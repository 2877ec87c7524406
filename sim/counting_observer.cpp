#include "sim/counting_observer.h"

namespace wakesim {

[[gnu::noinline, gnu::cold]] void CountingObserver::start_latency_slow(size_t id) {
    wake_time_.resize(id + 1, -1);
    wake_time_[id] = clock_.now();
}

void CountingObserver::ttwu_woken(const Task& p, int cpu, int this_cpu, WokenVia via, const SelectResultEv* placement) {
    Counters& c = m_.c;
    ++c.wakeups;
    // ttwu_stat() counts every successful wakeup as local or remote.
    if (cpu == this_cpu)
        ++c.wakeups_local;
    else
        ++c.wakeups_remote;
    switch (via) {
        case WokenVia::running:
            ++c.wakeups_runnable;
            return;  // it never slept: no wake-to-run latency
        case WokenVia::delayed:
            ++c.wakeups_runnable;
            break;
        case WokenVia::queue_ipi:
            ++c.ipis;
            break;
        case WokenVia::wakelist_ipi:
            ++c.ipis;
            ++c.wakeups_ipi;
            break;
        case WokenVia::wakelist_poll:
            ++c.wakeups_poll;
            break;
        case WokenVia::queue:
        case WokenVia::wakelist:
            break;
    }
    if (placement) {
        ++c.select_calls;
        if (placement->outcome != SelectOutcome::kCount) ++c.outcomes[static_cast<size_t>(placement->outcome)];
        if (placement->wide) ++c.wake_wide;
        if (placement->affine) ++c.wakeups_affine;
        c.sis_probes += static_cast<uint64_t>(placement->sis_probes);
    }
    // The wake-to-run latency starts now.
    const auto id = static_cast<size_t>(p.id);
    if (id < wake_time_.size()) {
        wake_time_[id] = clock_.now();
        return;
    }
    start_latency_slow(id);
}

void CountingObserver::migrate(const Task&, int from, int to, MigrationCause cause) {
    ++m_.c.migrations_by_cause[static_cast<size_t>(cause)];
    ++m_.c.migrations_by_distance[static_cast<size_t>(topo_.classify(from, to))];
}

void CountingObserver::sched_switch(int, const Task* prev, char prev_state, const Task*) {
    ++m_.c.context_switches;
    if (prev && prev_state == 'R') ++m_.c.preemptions;  // a re-pick of the same task is no preemption
}

void CountingObserver::switched_in(int, const Task& t) {
    const auto id = static_cast<size_t>(t.id);
    if (id >= wake_time_.size()) return;
    const Time woken = wake_time_[id];
    if (woken < 0) return;
    wake_time_[id] = -1;
    m_.wake_latency.add(clock_.now() - woken);
}

void CountingObserver::balance(int, int, bool newidle, bool) {
    ++m_.c.balance_runs;
    if (newidle) ++m_.c.newidle_runs;
}

}  // namespace wakesim
