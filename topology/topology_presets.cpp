// Named machines, one table: each entry says which real machine it approximates and why its
// shape is what the scheduler sees there (see docs/topology.md).
#include <stdexcept>

#include "topology/topology.h"

namespace wakesim {

namespace {

struct Preset {
    const char* name;
    const char* description;
    Topology (*make)(const char* name, const char* description);
};

Topology make_altra(const char* name, const char* description) {
    CompactShape s;
    s.cores_per_cluster = 80;
    return Topology::from_compact(name, description, s);
}

Topology make_two_socket_intel(const char* name, const char* description) {
    CompactShape s;
    s.packages = 2;
    s.cores_per_cluster = 8;
    s.threads_per_core = 2;
    s.numbering = CpuNumbering::siblings_split;
    s.node_distance = {{10, 21}, {21, 10}};
    return Topology::from_compact(name, description, s);
}

Topology make_epyc_zen4(const char* name, const char* description) {
    CompactShape s;
    s.packages = 2;
    s.llcs_per_node = 12;
    s.cores_per_cluster = 8;
    s.threads_per_core = 2;
    s.numbering = CpuNumbering::siblings_split;
    s.node_distance = {{10, 32}, {32, 10}};
    return Topology::from_compact(name, description, s);
}

Topology make_phone(const char* name, const char* description) {
    // Clusters of unequal size cannot be written compactly.
    std::vector<CpuInfo> cpus;
    auto add = [&](int count, int cluster, int capacity) {
        for (int i = 0; i < count; ++i) {
            const int id = static_cast<int>(cpus.size());
            cpus.push_back(CpuInfo{id, id, cluster, 0, 0, 0, capacity});
        }
    };
    add(4, 0, 160);   // Cortex-A55
    add(3, 1, 768);   // Cortex-A78
    add(1, 2, 1024);  // Cortex-X1
    return Topology::from_cpus(name, description, std::move(cpus), {{10}}, true);
}

Topology make_kvm(const char* name, const char* description) {
    CompactShape s;
    s.cores_per_cluster = 2;
    return Topology::from_compact(name, description, s);
}

const Preset kPresets[] = {
    {"altra-80",
     "Ampere Altra Q80-30: 80 Neoverse-N1 cores, no SMT, 1 package, 1 NUMA node. Core pairs share no "
     "cache, so the kernel limits CLS to one CPU and MC spans the whole package (the SLC is the LLC).",
     make_altra},
    {"xeon-2s-16c32t",
     "Generic two-socket Intel Xeon: 2 x 8 cores x 2 threads, one L3 and one NUMA node per socket, "
     "SLIT distance 21, siblings numbered +16 (CPU c and c+16 share a core).",
     make_two_socket_intel},
    {"e5-2650-2s",
     "2 x Intel Xeon E5-2650 v2 (Ivy Bridge-EP, 8 cores/16 threads, 2.6 GHz, 20 MB L3 per socket): "
     "one node per socket, SLIT distance 21, siblings numbered +16.",
     make_two_socket_intel},
    {"epyc-zen4-2s",
     "2 x AMD EPYC 9654 (Genoa, Zen 4): 2 sockets x 12 CCX x 8 cores x 2 threads = 384 CPUs, a 32 MB "
     "L3 per CCX, NPS1 (one node per socket), SLIT distance 32; CPUs 0-191 are the first thread of every "
     "core, 192-383 their siblings.",
     make_epyc_zen4},
    {"bl-4-3-1",
     "Snapdragon 888-class phone SoC: 4 little Cortex-A55 (capacity 160), 3 big Cortex-A78 (768), "
     "1 prime Cortex-X1 (1024), one DSU L3 shared by all, each core type its own cluster.",
     make_phone},
    {"kvm-2vcpu",
     "KVM guest with 2 vCPUs on an AMD EPYC Zen 4 host: no SMT exposed, one LLC, one node (the "
     "project's development machine).",
     make_kvm},
};

}  // namespace

std::vector<TopologyPresetInfo> topology_presets() {
    std::vector<TopologyPresetInfo> out;
    for (const Preset& p : kPresets) out.push_back({p.name, p.description});
    return out;
}

bool is_topology_preset(const std::string& name) {
    for (const Preset& p : kPresets)
        if (name == p.name) return true;
    return false;
}

Topology make_topology_preset(const std::string& name) {
    for (const Preset& p : kPresets)
        if (name == p.name) return p.make(p.name, p.description);
    std::string valid;
    for (const Preset& p : kPresets) {
        if (!valid.empty()) valid += ", ";
        valid += p.name;
    }
    throw std::out_of_range("unknown topology preset \"" + name + "\"; valid values are: " + valid);
}

}  // namespace wakesim
