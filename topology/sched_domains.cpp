// Sched-domain construction as kernel/sched/topology.c does it: one topology level table, sd_init
// flags, groups from child spans, cpu_attach_domain degeneration, update_top_cache_domain.
#include "topology/sched_domains.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace wakesim {

namespace {

// Flags that mean nothing in a domain with a single group (sd_flags.h SDF_NEEDS_GROUPS).
constexpr uint32_t kNeedsGroups = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_BALANCE_WAKE |
                                  SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL | SD_SHARE_CPUCAPACITY |
                                  SD_CLUSTER | SD_SHARE_LLC | SD_SERIALIZE | SD_ASYM_PACKING | SD_PREFER_SIBLING |
                                  SD_NUMA;
// Flags that, once absent on the way up, never reappear (sd_flags.h SDF_SHARED_CHILD).
constexpr uint32_t kSharedChild = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_BALANCE_WAKE |
                                  SD_WAKE_AFFINE | SD_SHARE_CPUCAPACITY | SD_SHARE_LLC | SD_ASYM_PACKING;

constexpr std::pair<uint32_t, const char*> kFlagNames[] = {
    {SD_BALANCE_NEWIDLE, "SD_BALANCE_NEWIDLE"},
    {SD_BALANCE_EXEC, "SD_BALANCE_EXEC"},
    {SD_BALANCE_FORK, "SD_BALANCE_FORK"},
    {SD_BALANCE_WAKE, "SD_BALANCE_WAKE"},
    {SD_WAKE_AFFINE, "SD_WAKE_AFFINE"},
    {SD_ASYM_CPUCAPACITY, "SD_ASYM_CPUCAPACITY"},
    {SD_ASYM_CPUCAPACITY_FULL, "SD_ASYM_CPUCAPACITY_FULL"},
    {SD_SHARE_CPUCAPACITY, "SD_SHARE_CPUCAPACITY"},
    {SD_CLUSTER, "SD_CLUSTER"},
    {SD_SHARE_LLC, "SD_SHARE_LLC"},
    {SD_SERIALIZE, "SD_SERIALIZE"},
    {SD_ASYM_PACKING, "SD_ASYM_PACKING"},
    {SD_PREFER_SIBLING, "SD_PREFER_SIBLING"},
    {SD_NUMA, "SD_NUMA"},
};

// One row of the topology level table (default_topology[] plus sched_init_numa's levels).
struct Level {
    std::string name;
    uint32_t flags = 0;   // the level's own flags (tl->sd_flags)
    int numa_level = -1;  // -1: not from sched_init_numa; 0: NODE; >= 1: NUMA
    int distance = 0;     // sched_domains_numa_distance[numa_level]
};

std::vector<Level> level_table(const Topology& topo) {
    std::vector<Level> t = {{"SMT", SD_SHARE_CPUCAPACITY | SD_SHARE_LLC}};
    if (topo.has_clusters()) t.push_back({"CLS", SD_CLUSTER | SD_SHARE_LLC});
    t.push_back({"MC", SD_SHARE_LLC});
    t.push_back({"PKG", 0});
    if (topo.nr_nodes() > 1) {
        std::set<int> distances;
        for (int a = 0; a < topo.nr_nodes(); ++a)
            for (int b = 0; b < topo.nr_nodes(); ++b) distances.insert(topo.node_distance(a, b));
        const std::vector<int> d(distances.begin(), distances.end());
        t.push_back({"NODE", 0, 0, d[0]});
        for (size_t j = 1; j < d.size(); ++j) {
            const std::string name = d.size() == 2 ? "NUMA" : "NUMA" + std::to_string(j);
            t.push_back({name, SD_NUMA, static_cast<int>(j), d[j]});
        }
    }
    return t;
}

// tl->mask(cpu): the CPUs a level spans around `cpu`. PKG is the node, as cpu_cpu_mask() is.
CpuSet level_mask(const Topology& topo, const Level& l, int cpu) {
    if (l.name == "SMT") return topo.smt_siblings(cpu);
    if (l.name == "CLS") return topo.cluster_span(cpu);
    if (l.name == "MC") return topo.llc_span(cpu);
    if (l.numa_level < 0) return topo.node_span(cpu);
    CpuSet s;
    const int home = topo.cpu(cpu).node;
    for (int n = 0; n < topo.nr_nodes(); ++n)
        if (topo.node_distance(home, n) <= l.distance) s |= topo.node_cpus(n);
    return s;
}

// asym_cpu_capacity_classify(): how many of the system's capacities the span holds.
uint32_t classify_capacity(const Topology& topo, const CpuSet& span, const std::set<int>& all_caps) {
    if (all_caps.size() < 2) return 0;
    std::set<int> caps;
    span.for_each([&](int c) { caps.insert(topo.cpu(c).capacity); });
    if (caps.size() < 2) return 0;
    return caps.size() == all_caps.size() ? SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL : SD_ASYM_CPUCAPACITY;
}

// sd_init(): defaults for every level, then the level's own flags decide the tuning.
SchedDomain sd_init(const Topology& topo, const Level& l, const CpuSet& span, SchedDomain* child,
                    const std::set<int>& all_caps, int reclaim_distance) {
    SchedDomain sd;
    sd.name = l.name;
    sd.span = span;
    const int w = span.count();
    sd.min_interval_ms = w;
    sd.max_interval_ms = 2 * w;
    sd.busy_factor = 16;
    sd.imbalance_pct = 117;
    sd.cache_nice_tries = 0;
    sd.flags = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING | l.flags;
    sd.flags |= classify_capacity(topo, span, all_caps);
    if ((sd.flags & SD_ASYM_CPUCAPACITY) && child) child->flags &= ~SD_PREFER_SIBLING;

    if (sd.flags & SD_SHARE_CPUCAPACITY) {
        sd.imbalance_pct = 110;
    } else if (sd.flags & SD_SHARE_LLC) {
        sd.cache_nice_tries = 1;
    } else if (sd.flags & SD_NUMA) {
        sd.cache_nice_tries = 2;
        sd.flags &= ~SD_PREFER_SIBLING;
        sd.flags |= SD_SERIALIZE;
        if (l.distance > reclaim_distance) sd.flags &= ~(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
    } else {
        sd.cache_nice_tries = 1;
    }
    return sd;
}

// sd_degenerate()
bool degenerate(const SchedDomain& sd) {
    if (sd.span_weight() == 1) return true;
    if ((sd.flags & kNeedsGroups) && sd.groups.size() > 1) return false;
    return !(sd.flags & SD_WAKE_AFFINE);
}

// sd_parent_degenerate()
bool parent_degenerate(const SchedDomain& sd, const SchedDomain& parent) {
    if (degenerate(parent)) return true;
    if (sd.span != parent.span) return false;
    uint32_t pflags = parent.flags;
    if (parent.groups.size() == 1) pflags &= ~kNeedsGroups;
    return (~sd.flags & pflags) == 0;
}

// highest_flag_domain(): climbs while the flag holds when it is shared with children.
int highest_flag(const std::vector<SchedDomain>& levels, uint32_t flag) {
    int found = -1;
    for (size_t i = 0; i < levels.size(); ++i) {
        if (levels[i].flags & flag) {
            found = static_cast<int>(i);
            continue;
        }
        if (flag & kSharedChild) break;
    }
    return found;
}

int lowest_flag(const std::vector<SchedDomain>& levels, uint32_t flag) {
    for (size_t i = 0; i < levels.size(); ++i)
        if (levels[i].flags & flag) return static_cast<int>(i);
    return -1;
}

std::string groups_text(const SchedDomain& sd) {
    std::ostringstream o;
    std::map<int, int> sizes;
    for (const CpuSet& g : sd.groups) ++sizes[g.count()];
    o << sd.groups.size() << (sd.groups.size() == 1 ? " group" : " groups");
    if (sizes.size() == 1) {
        o << " of " << sizes.begin()->first;
    } else {
        o << " of ";
        for (size_t i = 0; i < sd.groups.size(); ++i) o << (i ? "+" : "") << sd.groups[i].count();
    }
    if (sd.groups.size() <= 8) {
        o << ":";
        for (const CpuSet& g : sd.groups) o << " {" << g.to_list() << "}";
    }
    return o.str();
}

std::string level_ref(const CpuDomains& d, int idx) { return idx < 0 ? "-" : d.levels[static_cast<size_t>(idx)].name; }

}  // namespace

std::string sd_flags_to_string(uint32_t flags) {
    std::string s;
    for (const auto& [bit, name] : kFlagNames)
        if (flags & bit) {
            if (!s.empty()) s += '|';
            s += name;
        }
    return s;
}

// build_sched_domains() + cpu_attach_domain() + update_top_cache_domain(), for every CPU.
SchedDomains SchedDomains::build(const Topology& topo, int reclaim_distance) {
    const int n = topo.nr_cpus();
    const std::vector<Level> table = level_table(topo);
    std::set<int> all_caps;
    for (const CpuInfo& c : topo.cpus()) all_caps.insert(c.capacity);

    SchedDomains out;
    // raw[cpu][t]: the domain of level t before degeneration; a CPU stops at the first level
    // spanning the whole machine, as the kernel's build loop does.
    std::vector<std::vector<SchedDomain>> raw(static_cast<size_t>(n));
    for (int cpu = 0; cpu < n; ++cpu) {
        auto& chain = raw[static_cast<size_t>(cpu)];
        for (const Level& l : table) {
            CpuSet span = level_mask(topo, l, cpu);
            if (!chain.empty()) span |= chain.back().span;  // a broken arch topology is widened
            SchedDomain* child = chain.empty() ? nullptr : &chain.back();
            SchedDomain sd = sd_init(topo, l, span, child, all_caps, reclaim_distance);
            chain.push_back(std::move(sd));
            if (chain.back().flags & SD_ASYM_CPUCAPACITY) out.asym_active_ = true;
            if (span == topo.all()) break;
        }
    }

    // build_sched_groups() / build_overlap_sched_groups(): each group is a child span, first the
    // owner's, then walking the span from the owner with wrap-around.
    for (int cpu = 0; cpu < n; ++cpu) {
        auto& chain = raw[static_cast<size_t>(cpu)];
        for (size_t t = 0; t < chain.size(); ++t) {
            SchedDomain& sd = chain[t];
            const bool overlap = table[t].numa_level >= 1;
            CpuSet covered;
            const int weight = sd.span_weight();
            for (int i = sd.span.next_wrap(cpu), seen = 0; seen < weight; i = sd.span.next_wrap(i + 1), ++seen) {
                if (covered.test(i)) continue;
                const auto& other = raw[static_cast<size_t>(i)];
                CpuSet group = CpuSet::single(i);
                if (overlap) {
                    if (other.size() <= t) continue;  // that CPU's tree ended below this level
                    int k = static_cast<int>(t) - 1;
                    while (k >= 0 && !sd.span.contains(other[static_cast<size_t>(k)].span)) --k;
                    if (k >= 0) group = other[static_cast<size_t>(k)].span;
                } else if (t > 0 && other.size() >= t) {
                    group = other[t - 1].span;
                }
                covered |= group;
                sd.groups.push_back(group);
            }
        }
    }

    // build_sched_domains(): imb_numa_nr on the undegenerated tree. The first level above the LLC
    // allows one task per LLC it spans (1/8 of its CPUs when it spans one LLC); each level above
    // scales that by how many of the lowest NUMA level's spans it holds.
    for (auto& chain : raw) {
        int imb = 0, imb_span = 1;
        for (size_t t = 1; t < chain.size(); ++t) {
            SchedDomain& sd = chain[t];
            const SchedDomain& child = chain[t - 1];
            if (!(sd.flags & SD_SHARE_LLC) && (child.flags & SD_SHARE_LLC)) {
                size_t top = t + 1;
                while (top < chain.size() && !(chain[top].flags & SD_NUMA)) ++top;
                imb_span = top < chain.size() ? chain[top].span_weight() : sd.span_weight();
                const int nr_llcs = sd.span_weight() / child.span_weight();
                imb = std::max(1, nr_llcs == 1 ? sd.span_weight() >> 3 : nr_llcs);
                sd.imb_numa_nr = imb;
            } else if (imb > 0) {
                sd.imb_numa_nr = imb * std::max(1, sd.span_weight() / imb_span);
            }
        }
    }

    out.per_cpu_.resize(static_cast<size_t>(n));
    for (int cpu = 0; cpu < n; ++cpu) {
        std::vector<SchedDomain> levels = std::move(raw[static_cast<size_t>(cpu)]);
        // cpu_attach_domain(): drop parents that add nothing, then a single-CPU base domain.
        for (size_t k = 0; k + 1 < levels.size();) {
            if (parent_degenerate(levels[k], levels[k + 1])) {
                if (levels[k + 1].flags & SD_PREFER_SIBLING) levels[k].flags |= SD_PREFER_SIBLING;
                levels.erase(levels.begin() + static_cast<std::ptrdiff_t>(k) + 1);
            } else {
                ++k;
            }
        }
        if (!levels.empty() && degenerate(levels.front())) levels.erase(levels.begin());

        CpuDomains& d = out.per_cpu_[static_cast<size_t>(cpu)];
        d.levels = std::move(levels);
        d.sd_llc = highest_flag(d.levels, SD_SHARE_LLC);
        d.sd_llc_size = d.sd_llc >= 0 ? d.levels[static_cast<size_t>(d.sd_llc)].span_weight() : 1;
        d.sd_llc_id = d.sd_llc >= 0 ? d.levels[static_cast<size_t>(d.sd_llc)].span.first() : cpu;
        const int cls = lowest_flag(d.levels, SD_CLUSTER);
        d.sd_share_id = cls >= 0 ? d.levels[static_cast<size_t>(cls)].span.first() : d.sd_llc_id;
        d.sd_numa = lowest_flag(d.levels, SD_NUMA);
        d.sd_asym_cpucapacity = lowest_flag(d.levels, SD_ASYM_CPUCAPACITY_FULL);
        if (cls >= 0) out.cluster_active_ = true;
    }
    // sched_smt_present: switched on as soon as a core has two online threads.
    out.smt_active_ = topo.smt_present();
    return out;
}

std::string SchedDomains::describe(const Topology& topo) const {
    // CPUs whose domains have the same shape (names, flags, tuning, weights, group sizes) share
    // one block, so a 384-CPU machine prints a handful of blocks.
    std::map<std::string, CpuSet> shapes;
    std::vector<std::string> order;
    for (int cpu = 0; cpu < nr_cpus(); ++cpu) {
        const CpuDomains& d = of(cpu);
        std::ostringstream key;
        for (const SchedDomain& sd : d.levels) {
            key << sd.name << ':' << sd.flags << ':' << sd.imbalance_pct << ':' << sd.cache_nice_tries << ':'
                << sd.busy_factor << ':' << sd.min_interval_ms << ':' << sd.max_interval_ms << ':' << sd.span_weight();
            for (const CpuSet& g : sd.groups) key << ',' << g.count();
            key << ';';
        }
        key << d.sd_llc << ':' << d.sd_llc_size << ':' << d.sd_numa << ':' << d.sd_asym_cpucapacity << ':'
            << (d.sd_share_id == d.sd_llc_id) << ':' << topo.cpu(cpu).capacity;
        auto [it, inserted] = shapes.emplace(key.str(), CpuSet{});
        if (inserted) order.push_back(key.str());
        it->second.set(cpu);
    }

    std::ostringstream o;
    o << "sched domains of " << topo.name() << ": " << nr_cpus() << " CPUs, " << order.size()
      << (order.size() == 1 ? " shape" : " shapes") << "; smt_active=" << (smt_active_ ? "yes" : "no")
      << " cluster_active=" << (cluster_active_ ? "yes" : "no") << " asym_active=" << (asym_active_ ? "yes" : "no")
      << '\n';
    for (const std::string& k : order) {
        const CpuSet& cpus = shapes[k];
        const int ex = cpus.first();
        const CpuDomains& d = of(ex);
        o << (cpus.count() == 1 ? "\nCPU " : "\nCPUs ") << cpus.to_list() << " (" << cpus.count()
          << "; spans shown for CPU " << ex
          << ", capacity " << topo.cpu(ex).capacity << ")\n";
        if (d.levels.empty()) o << "  no domains (a single CPU balances nothing)\n";
        for (size_t i = 0; i < d.levels.size(); ++i) {
            const SchedDomain& sd = d.levels[i];
            o << "  domain" << i << ' ' << sd.name << "  span {" << sd.span.to_list() << "} (" << sd.span_weight()
              << ")  " << groups_text(sd) << '\n'
              << "    flags " << sd_flags_to_string(sd.flags) << '\n'
              << "    imbalance_pct " << sd.imbalance_pct << "  cache_nice_tries " << sd.cache_nice_tries
              << "  busy_factor " << sd.busy_factor << "  interval " << sd.min_interval_ms << ".."
              << sd.max_interval_ms << " ms\n";
        }
        o << "  sd_llc " << level_ref(d, d.sd_llc) << "  sd_llc_size " << d.sd_llc_size << "  sd_llc_id " << d.sd_llc_id
          << "  sd_share_id " << d.sd_share_id << "  sd_numa " << level_ref(d, d.sd_numa) << "  sd_asym_cpucapacity "
          << level_ref(d, d.sd_asym_cpucapacity) << '\n';
        // The LLC instances these CPUs belong to, by sd_llc_id.
        std::map<int, CpuSet> llcs;
        cpus.for_each([&](int c) { llcs[of(c).sd_llc_id].set(c); });
        if (llcs.size() > 1) {
            o << "  " << llcs.size() << " LLC instances (sd_llc_id: CPUs):";
            size_t width = 100;  // wrap long lists so a 24-CCX machine stays legible
            for (const auto& [id, members] : llcs) {
                const std::string item = ' ' + std::to_string(id) + ": {" + members.to_list() + '}';
                if (width + item.size() > 100) {
                    o << "\n   ";
                    width = 3;
                }
                o << item;
                width += item.size();
            }
            o << '\n';
        }
    }
    return o.str();
}

nlohmann::json SchedDomains::to_json() const {
    nlohmann::json cpus = nlohmann::json::array();
    for (int cpu = 0; cpu < nr_cpus(); ++cpu) {
        const CpuDomains& d = of(cpu);
        nlohmann::json levels = nlohmann::json::array();
        for (const SchedDomain& sd : d.levels) {
            nlohmann::json groups = nlohmann::json::array();
            for (const CpuSet& g : sd.groups) groups.push_back(g.to_list());
            levels.push_back({{"name", sd.name},
                              {"span", sd.span.to_list()},
                              {"span_weight", sd.span_weight()},
                              {"flags", sd_flags_to_string(sd.flags)},
                              {"flags_value", sd.flags},
                              {"imbalance_pct", sd.imbalance_pct},
                              {"cache_nice_tries", sd.cache_nice_tries},
                              {"busy_factor", sd.busy_factor},
                              {"min_interval_ms", sd.min_interval_ms},
                              {"max_interval_ms", sd.max_interval_ms},
                              {"groups", std::move(groups)}});
        }
        auto name_or_null = [&](int idx) -> nlohmann::json {
            return idx < 0 ? nlohmann::json(nullptr) : nlohmann::json(d.levels[static_cast<size_t>(idx)].name);
        };
        cpus.push_back({{"cpu", cpu},
                        {"levels", std::move(levels)},
                        {"sd_llc", name_or_null(d.sd_llc)},
                        {"sd_llc_size", d.sd_llc_size},
                        {"sd_llc_id", d.sd_llc_id},
                        {"sd_share_id", d.sd_share_id},
                        {"sd_numa", name_or_null(d.sd_numa)},
                        {"sd_asym_cpucapacity", name_or_null(d.sd_asym_cpucapacity)}});
    }
    return {{"smt_active", smt_active_},
            {"cluster_active", cluster_active_},
            {"asym_active", asym_active_},
            {"cpus", std::move(cpus)}};
}

}  // namespace wakesim
