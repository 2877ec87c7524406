// Sched domains as the kernel builds them (kernel/sched/topology.c: sd_init, build_sched_domains,
// degeneration, update_top_cache_domain), per CPU, bottom-up.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topology/cpuset.h"
#include "topology/topology.h"

namespace wakesim {

// include/linux/sched/sd_flags.h values.
enum SdFlag : uint32_t {
    SD_BALANCE_NEWIDLE = 0x1,
    SD_BALANCE_EXEC = 0x2,
    SD_BALANCE_FORK = 0x4,
    SD_BALANCE_WAKE = 0x8,
    SD_WAKE_AFFINE = 0x10,
    SD_ASYM_CPUCAPACITY = 0x20,
    SD_ASYM_CPUCAPACITY_FULL = 0x40,
    SD_SHARE_CPUCAPACITY = 0x80,
    SD_CLUSTER = 0x100,
    SD_SHARE_LLC = 0x200,
    SD_SERIALIZE = 0x400,
    SD_ASYM_PACKING = 0x800,
    SD_PREFER_SIBLING = 0x1000,
    SD_NUMA = 0x2000,
};
std::string sd_flags_to_string(uint32_t flags);  // "SD_BALANCE_NEWIDLE|SD_WAKE_AFFINE|..."

struct SchedDomain {
    std::string name;  // SMT, CLS, MC, PKG, NODE, NUMA1, NUMA2 ...
    CpuSet span;
    uint32_t flags = 0;
    int imbalance_pct = 117;
    int busy_factor = 16;
    int cache_nice_tries = 1;
    int min_interval_ms = 1;  // span weight
    int max_interval_ms = 2;  // 2 x span weight
    int imb_numa_nr = 0;      // running tasks a NUMA level lets a node hold before spreading
    std::vector<CpuSet> groups;  // first group contains the owning CPU
    int span_weight() const { return span.count(); }
};

struct CpuDomains {
    std::vector<SchedDomain> levels;  // bottom-up, after degeneration
    int sd_llc = -1;                  // index into levels, -1 if none
    int sd_llc_size = 1;
    int sd_llc_id = 0;                // first CPU of the LLC span (or the CPU itself)
    int sd_share_id = 0;              // first CPU of the lowest CLUSTER domain, else sd_llc_id
    int sd_numa = -1;                 // lowest domain with SD_NUMA
    int sd_asym_cpucapacity = -1;     // lowest domain with SD_ASYM_CPUCAPACITY_FULL
};

class SchedDomains {
public:
    // reclaim_distance: NUMA levels farther than this lose WAKE_AFFINE/BALANCE_FORK/EXEC (30).
    static SchedDomains build(const Topology& topo, int reclaim_distance = 30);

    const CpuDomains& of(int cpu) const { return per_cpu_[cpu]; }
    int nr_cpus() const { return static_cast<int>(per_cpu_.size()); }
    bool smt_active() const { return smt_active_; }
    bool cluster_active() const { return cluster_active_; }
    bool asym_active() const { return asym_active_; }

    // Human-readable dump (one block per CPU, or per distinct domain shape) for `topo show`.
    std::string describe(const Topology& topo) const;
    nlohmann::json to_json() const;

private:
    std::vector<CpuDomains> per_cpu_;
    bool smt_active_ = false, cluster_active_ = false, asym_active_ = false;
};

}  // namespace wakesim
