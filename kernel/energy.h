// The energy model as the scheduler reads it (include/linux/energy_model.h, struct em_perf_domain,
// and kernel/sched/topology.c's perf_domain list of the root domain), built once from the machine
// profile's energy model (hw/machine_profile.h). kernel/energy.cpp holds fair.c's EAS functions.
#pragma once
#include <cstdint>
#include <vector>

#include "topology/cpuset.h"

namespace wakesim {

// struct em_perf_state: performance = capacity x freq / max freq (em_init_performance()), cost =
// power x 10 / performance (em_compute_costs()). Inefficient states (a cost not below a faster
// state's) are left out: with EM_PERF_DOMAIN_SKIP_INEFFICIENCIES em_pd_get_efficient_state()
// never picks them.
struct EmPerfState {
    int64_t performance = 0;
    int64_t cost = 0;
};

struct EmPerfDomain {
    CpuSet cpus;
    int nr_cpus = 0;
    int capacity = 0;  // arch_scale_cpu_capacity() of its CPUs
    std::vector<EmPerfState> states;  // ascending performance, efficient ones only
};

// em_cpu_energy(): the OPP that max_util needs (the first efficient state at or above it) priced
// for sum_util of busy time: cost x sum_util.
inline double em_cpu_energy(const EmPerfDomain& pd, double max_util, double sum_util, double allowed_cpu_cap) {
    if (sum_util <= 0) return 0;
    if (max_util > allowed_cpu_cap) max_util = allowed_cpu_cap;
    const EmPerfState* ps = &pd.states.back();
    for (const EmPerfState& s : pd.states)
        if (static_cast<double>(s.performance) >= max_util) {
            ps = &s;
            break;
        }
    return static_cast<double>(ps->cost) * sum_util;
}

}  // namespace wakesim
