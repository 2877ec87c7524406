#include "sim/counting_observer.h"

#include <algorithm>

namespace wakesim {

namespace {

// Index into Metrics::roles, or -1 for other tasks.
int role_index(const Task& t) { return t.role == TaskRole::requester ? 0 : t.role == TaskRole::server ? 1 : -1; }

}  // namespace

CountingObserver::CountingObserver(Metrics& m, const Topology& topo, const Engine& clock)
    : m_(m),
      topo_(topo),
      clock_(clock),
      on_cpu_since_(static_cast<size_t>(topo.nr_cpus()), 0),
      cur_role_(static_cast<size_t>(topo.nr_cpus()), -1) {
    m_.init(topo);
    for (const CpuInfo& c : topo.cpus())
        class_of_.push_back(static_cast<int>(std::find(m_.capacities.begin(), m_.capacities.end(), c.capacity) -
                                             m_.capacities.begin()));
}

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
        case WokenVia::queue_poll:  // no IPI: wakeups.poll counts wake-list wakeups only
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

void CountingObserver::migrate(const Task& p, int from, int to, MigrationCause cause) {
    ++m_.c.migrations_by_cause[static_cast<size_t>(cause)];
    if (const int r = role_index(p); r >= 0) ++m_.roles[static_cast<size_t>(r)].migrations;
    ++m_.c.migrations_by_distance[static_cast<size_t>(topo_.classify(from, to))];
}

void CountingObserver::add_role_time(int cpu, int role, Time until) {
    const Time ran = until - std::max(on_cpu_since_[static_cast<size_t>(cpu)], m_.window_start);
    if (ran <= 0) return;
    RoleTime& rt = m_.roles[static_cast<size_t>(role)];
    rt.total += ran;
    rt.by_node[static_cast<size_t>(topo_.cpu(cpu).node)] += ran;
    rt.by_class[static_cast<size_t>(class_of_[static_cast<size_t>(cpu)])] += ran;
}

void CountingObserver::flush(Time end) {
    for (int cpu = 0; cpu < topo_.nr_cpus(); ++cpu) {
        const int r = cur_role_[static_cast<size_t>(cpu)];
        if (r < 0) continue;
        add_role_time(cpu, r, end);
        on_cpu_since_[static_cast<size_t>(cpu)] = end;
    }
}

void CountingObserver::sched_switch(int cpu, const Task* prev, char prev_state, const Task* next) {
    ++m_.c.context_switches;
    const auto c = static_cast<size_t>(cpu);
    const Time now = clock_.now();
    if (prev && cur_role_[c] >= 0) add_role_time(cpu, cur_role_[c], now);
    on_cpu_since_[c] = now;
    cur_role_[c] = next ? role_index(*next) : -1;
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
