// struct sg_lb_stats, group_classify() and a CPU's part of the statistics (kernel/sched/fair.c),
// shared by the load balancer's sched_balance_find_src_group() and fork placement's
// sched_balance_find_dst_group().
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernel/sched.h"

namespace wakesim {

constexpr int kNumaImbalanceMin = 2;     // NUMA_IMBALANCE_MIN
constexpr double kCapacityScale = 1024;  // SCHED_CAPACITY_SCALE

// enum group_type, in the kernel's order (a larger value is busier).
enum class GroupType : uint8_t { has_spare, fully_busy, misfit_task, smt_balance, asym_packing, imbalanced, overloaded };

// struct sg_lb_stats (plus the sched_group facts the balancer reads).
struct SgStats {
    double avg_load = 0, group_load = 0, group_capacity = 0, group_util = 0, group_runnable = 0;
    double misfit_task_load = 0, min_capacity = 0, max_capacity = 0;
    int sum_nr_running = 0, sum_h_nr_running = 0, idle_cpus = 0, group_weight = 0, cores = 0;
    bool smt_balance = false, smt_group = false;
    GroupType type = GroupType::has_spare;
};

// group_is_overloaded()
inline bool group_is_overloaded(int pct, const SgStats& s) {
    if (s.sum_nr_running <= s.group_weight) return false;
    if (s.group_capacity * 100 < s.group_util * pct) return true;
    return s.group_capacity * pct < s.group_runnable * 100;
}

// group_has_capacity()
inline bool group_has_capacity(int pct, const SgStats& s) {
    if (s.sum_nr_running < s.group_weight) return true;
    if (s.group_capacity * pct < s.group_runnable * 100) return false;
    return s.group_capacity * 100 > s.group_util * pct;
}

// group_classify(): no group_imbalanced (no LBF_SOME_PINNED feedback) and no asym_packing.
inline GroupType group_classify(int pct, const SgStats& s) {
    if (group_is_overloaded(pct, s)) return GroupType::overloaded;
    if (s.smt_balance) return GroupType::smt_balance;
    if (s.misfit_task_load > 0) return GroupType::misfit_task;
    if (!group_has_capacity(pct, s)) return GroupType::fully_busy;
    return GroupType::has_spare;
}

// A CPU's part of a group's statistics, inline: fork placement and the balancer add it for
// every CPU of every group they look at.
inline void Scheduler::sg_account_cpu(SgStats& s, int cpu) const {
    const Rq& r = rq_of(cpu);
    s.group_load += cpu_load(cpu);
    s.group_util += cpu_util(cpu);
    s.group_runnable += cpu_runnable(cpu);
    s.sum_h_nr_running += r.nr_running - r.nr_delayed;
    s.sum_nr_running += r.nr_running;
    if (r.nr_running == 0 && available_idle_cpu(cpu)) ++s.idle_cpus;
    s.group_capacity += capacity_of(cpu);
    s.max_capacity = std::max<double>(s.max_capacity, capacity_of(cpu));
}

}  // namespace wakesim
