#include "metrics/metrics.h"

#include <algorithm>
#include <bit>

namespace wakesim {

void Metrics::init(const Topology& topo) {
    capacities.clear();
    for (const CpuInfo& c : topo.cpus())
        if (std::find(capacities.begin(), capacities.end(), c.capacity) == capacities.end()) capacities.push_back(c.capacity);
    std::sort(capacities.rbegin(), capacities.rend());
    for (RoleTime& r : roles) {
        r.by_node.assign(static_cast<size_t>(topo.nr_nodes()), 0);
        r.by_class.assign(capacities.size(), 0);
    }
}

int64_t LatencyHistogram::bucket_upper(int b) {
    if (b < kSub) return b;
    int msb = b / kSub + 3;
    int sub = b % kSub;
    int shift = msb - 4;
    uint64_t lo = (uint64_t{1} << msb) | (static_cast<uint64_t>(sub) << shift);
    return static_cast<int64_t>(lo + ((uint64_t{1} << shift) - 1));
}

int64_t LatencyHistogram::percentile(double p) const {
    if (count_ == 0) return 0;
    auto rank = static_cast<uint64_t>(p * static_cast<double>(count_));
    if (rank >= count_) rank = count_ - 1;
    uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
        seen += b_[static_cast<size_t>(b)];
        if (seen > rank) {
            int64_t u = bucket_upper(b);
            return u < max_ ? u : max_;
        }
    }
    return max_;
}

const char* to_string(SelectOutcome o) {
    switch (o) {
        case SelectOutcome::pinned: return "pinned";
        case SelectOutcome::policy_early: return "policy_early";
        case SelectOutcome::current_cpu: return "current_cpu";
        case SelectOutcome::policy_affine: return "policy_affine";
        case SelectOutcome::sis_target: return "sis_target";
        case SelectOutcome::sis_prev: return "sis_prev";
        case SelectOutcome::sis_kthread: return "sis_kthread";
        case SelectOutcome::sis_recent: return "sis_recent";
        case SelectOutcome::sis_capacity: return "sis_capacity";
        case SelectOutcome::sis_smt: return "sis_smt";
        case SelectOutcome::sis_scan: return "sis_scan";
        case SelectOutcome::sis_fallback: return "sis_fallback";
        case SelectOutcome::slow_path: return "slow_path";
        case SelectOutcome::eas: return "eas";
        case SelectOutcome::vcpu_pack: return "vcpu_pack";
        case SelectOutcome::kCount: break;
    }
    return "?";
}

}  // namespace wakesim
