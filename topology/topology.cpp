// Topology facade: validation, precomputed per-CPU spans, and the Boost.Graph hierarchy that
// `topo show` walks. Hot-path queries read the CpuSet vectors only.
#include "topology/topology.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace wakesim {

namespace {

struct HierarchyVertex {
    std::string label;  // "pkg0", "node1", "llc3", "cls2", "core7", "cpu15"; root is ""
};
using HierarchyGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, HierarchyVertex>;
using Vertex = HierarchyGraph::vertex_descriptor;

std::string cpu_tag(int c) { return "CPU " + std::to_string(c); }

std::vector<std::vector<int>> default_distance(int nodes) {
    std::vector<std::vector<int>> d(static_cast<size_t>(nodes), std::vector<int>(static_cast<size_t>(nodes)));
    for (int a = 0; a < nodes; ++a)
        for (int b = 0; b < nodes; ++b)
            d[static_cast<size_t>(a)][static_cast<size_t>(b)] = a == b ? kLocalNodeDistance : kDefaultRemoteDistance;
    return d;
}

// Records that `child` lies inside `parent`; a second, different parent is a broken hierarchy.
void check_nesting(std::map<int, int>& seen, int child, int parent, const char* child_kind,
                   const char* parent_kind, int cpu) {
    auto [it, inserted] = seen.emplace(child, parent);
    if (!inserted && it->second != parent)
        throw std::invalid_argument(std::string(child_kind) + " " + std::to_string(child) + " spans " + parent_kind +
                                    "s " + std::to_string(it->second) + " and " + std::to_string(parent) +
                                    " (seen at " + cpu_tag(cpu) + "); each " + child_kind + " must lie inside one " +
                                    parent_kind);
}

std::vector<CpuInfo> compact_cpus(const CompactShape& s) {
    const int ncores = s.packages * s.nodes_per_package * s.llcs_per_node * s.clusters_per_llc * s.cores_per_cluster;
    const int n = ncores * s.threads_per_core;
    std::vector<CpuInfo> cpus(static_cast<size_t>(n));
    for (int core = 0; core < ncores; ++core) {
        const int cluster = core / s.cores_per_cluster;
        const int llc = cluster / s.clusters_per_llc;
        const int node = llc / s.llcs_per_node;
        const int package = node / s.nodes_per_package;
        for (int k = 0; k < s.threads_per_core; ++k) {
            const int id = s.numbering == CpuNumbering::siblings_adjacent ? core * s.threads_per_core + k
                                                                           : core + k * ncores;
            CpuInfo& c = cpus[static_cast<size_t>(id)];
            c.id = id;
            c.core = core;
            c.cluster = cluster;
            c.llc = llc;
            c.package = package;
            c.node = node;
            c.capacity = s.capacities.empty() ? 1024 : s.capacities[static_cast<size_t>(id)];
        }
    }
    return cpus;
}

}  // namespace

struct Topology::Graph {
    HierarchyGraph g;
    std::vector<Vertex> cpu_vertex;
};

const char* to_string(CpuDistance d) {
    switch (d) {
        case CpuDistance::same_cpu: return "same_cpu";
        case CpuDistance::smt: return "smt";
        case CpuDistance::cluster: return "cluster";
        case CpuDistance::llc: return "llc";
        case CpuDistance::cross_llc: return "cross_llc";
        case CpuDistance::cross_numa: return "cross_numa";
    }
    return "?";
}

const char* to_string(CpuNumbering n) {
    return n == CpuNumbering::siblings_adjacent ? "siblings_adjacent" : "siblings_split";
}

Topology::Topology() = default;
Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

Topology::Topology(const Topology& o)
    : name_(o.name_), description_(o.description_), cpus_(o.cpus_), node_distance_(o.node_distance_),
      all_(o.all_), smt_(o.smt_), cluster_(o.cluster_), llc_(o.llc_), package_(o.package_), node_(o.node_),
      node_cpus_(o.node_cpus_), smt_list_(o.smt_list_), smt_off_(o.smt_off_), smt_present_(o.smt_present_),
      has_clusters_(o.has_clusters_), asym_capacity_(o.asym_capacity_), max_capacity_(o.max_capacity_),
      graph_(o.graph_ ? std::make_unique<Graph>(*o.graph_) : nullptr) {}

Topology& Topology::operator=(const Topology& o) {
    if (this != &o) *this = Topology(o);
    return *this;
}

Topology Topology::from_cpus(std::string name, std::string description, std::vector<CpuInfo> cpus,
                             std::vector<std::vector<int>> node_distance, bool has_clusters) {
    if (cpus.empty()) throw std::invalid_argument("a topology needs at least one CPU");
    if (cpus.size() > static_cast<size_t>(kMaxCpus))
        throw std::invalid_argument("a topology has at most " + std::to_string(kMaxCpus) + " CPUs, got " +
                                    std::to_string(cpus.size()));
    const int n = static_cast<int>(cpus.size());
    std::sort(cpus.begin(), cpus.end(), [](const CpuInfo& a, const CpuInfo& b) { return a.id < b.id; });
    for (int i = 0; i < n; ++i) {
        const CpuInfo& c = cpus[static_cast<size_t>(i)];
        if (c.id != i)
            throw std::invalid_argument("CPU ids must be 0.." + std::to_string(n - 1) +
                                        ", each once; " + (c.id < i ? "duplicate id " : "missing id ") +
                                        std::to_string(c.id < i ? c.id : i));
    }

    if (node_distance.empty()) node_distance = {{kLocalNodeDistance}};
    const int nodes = static_cast<int>(node_distance.size());
    for (int a = 0; a < nodes; ++a) {
        const auto& row = node_distance[static_cast<size_t>(a)];
        if (static_cast<int>(row.size()) != nodes)
            throw std::invalid_argument("node distance matrix must be " + std::to_string(nodes) + "x" +
                                        std::to_string(nodes) + "; row " + std::to_string(a) + " has " +
                                        std::to_string(row.size()) + " entries");
        for (int b = 0; b < nodes; ++b) {
            const int d = row[static_cast<size_t>(b)];
            const std::string where = "node distance [" + std::to_string(a) + "][" + std::to_string(b) + "]";
            if (a == b && d != kLocalNodeDistance)
                throw std::invalid_argument(where + " must be 10 (the local distance), got " + std::to_string(d));
            // acpi_numa slit_valid(): a remote node is never as close as the local one.
            if (a != b && (d <= kLocalNodeDistance || d > kMaxNodeDistance))
                throw std::invalid_argument(where + " must be in 11..255 (farther than the local 10), got " +
                                            std::to_string(d));
            const int back = node_distance[static_cast<size_t>(b)][static_cast<size_t>(a)];
            if (a != b && d != back)
                throw std::invalid_argument(where + " = " + std::to_string(d) + " but [" + std::to_string(b) + "][" +
                                            std::to_string(a) + "] = " + std::to_string(back) +
                                            "; distances must be symmetric");
        }
    }

    std::map<int, int> core_cluster, core_llc, core_node, core_pkg, cluster_llc, llc_node, llc_pkg, node_pkg;
    for (CpuInfo& c : cpus) {
        if (!has_clusters) c.cluster = c.llc;
        if (c.core < 0 || c.cluster < 0 || c.llc < 0 || c.package < 0)
            throw std::invalid_argument(cpu_tag(c.id) + ": core, cluster, llc and package ids must be >= 0");
        if (c.node < 0 || c.node >= nodes)
            throw std::invalid_argument(cpu_tag(c.id) + ": node " + std::to_string(c.node) +
                                        " is outside the distance matrix (nodes 0.." + std::to_string(nodes - 1) + ")");
        if (c.capacity < 1 || c.capacity > 1024)
            throw std::invalid_argument(cpu_tag(c.id) + ": capacity must be in 1..1024, got " +
                                        std::to_string(c.capacity));
        check_nesting(core_llc, c.core, c.llc, "core", "LLC", c.id);
        check_nesting(core_node, c.core, c.node, "core", "node", c.id);
        check_nesting(core_pkg, c.core, c.package, "core", "package", c.id);
        if (has_clusters) {
            check_nesting(core_cluster, c.core, c.cluster, "core", "cluster", c.id);
            check_nesting(cluster_llc, c.cluster, c.llc, "cluster", "LLC", c.id);
        }
        check_nesting(llc_node, c.llc, c.node, "LLC", "node", c.id);
        check_nesting(llc_pkg, c.llc, c.package, "LLC", "package", c.id);
        check_nesting(node_pkg, c.node, c.package, "node", "package", c.id);
    }
    std::map<int, int> threads;
    for (const CpuInfo& c : cpus)
        if (++threads[c.core] > kMaxThreadsPerCore)
            throw std::invalid_argument("core " + std::to_string(c.core) + " has more than " +
                                        std::to_string(kMaxThreadsPerCore) + " threads");

    Topology t;
    t.name_ = std::move(name);
    t.description_ = std::move(description);
    t.cpus_ = std::move(cpus);
    t.node_distance_ = std::move(node_distance);

    // Spans by id: one pass to collect, one to hand each CPU its set.
    std::map<int, CpuSet> by_core, by_cluster, by_llc, by_pkg;
    t.node_cpus_.assign(static_cast<size_t>(nodes), CpuSet{});
    std::set<int> capacities;
    for (const CpuInfo& c : t.cpus_) {
        t.all_.set(c.id);
        by_core[c.core].set(c.id);
        by_cluster[c.cluster].set(c.id);
        by_llc[c.llc].set(c.id);
        by_pkg[c.package].set(c.id);
        t.node_cpus_[static_cast<size_t>(c.node)].set(c.id);
        capacities.insert(c.capacity);
    }
    for (const CpuInfo& c : t.cpus_) {
        t.smt_.push_back(by_core[c.core]);
        t.cluster_.push_back(by_cluster[c.cluster]);
        t.llc_.push_back(by_llc[c.llc]);
        t.package_.push_back(by_pkg[c.package]);
        t.node_.push_back(t.node_cpus_[static_cast<size_t>(c.node)]);
        if (t.smt_.back().count() >= 2) t.smt_present_ = true;
        // A cluster equal to its core or its LLC adds nothing (the CLS level would degenerate).
        if (has_clusters && t.cluster_.back() != t.llc_.back() && t.cluster_.back() != t.smt_.back())
            t.has_clusters_ = true;
    }
    t.smt_off_.push_back(0);
    for (const CpuSet& core : t.smt_) {
        core.for_each([&](int x) { t.smt_list_.push_back(x); });
        t.smt_off_.push_back(t.smt_list_.size());
    }
    if (!t.has_clusters_)
        for (CpuInfo& c : t.cpus_) c.cluster = c.llc;
    if (!t.has_clusters_) t.cluster_ = t.llc_;
    t.asym_capacity_ = capacities.size() >= 2;
    t.max_capacity_ = *capacities.rbegin();

    // Hierarchy graph: root -> pkg -> node -> llc -> [cluster] -> core -> cpu.
    t.graph_ = std::make_unique<Graph>();
    HierarchyGraph& g = t.graph_->g;
    const Vertex root = boost::add_vertex(HierarchyVertex{""}, g);
    std::map<std::pair<char, int>, Vertex> made;
    auto child_of = [&](Vertex parent, char kind, int id, const std::string& label) {
        auto it = made.find({kind, id});
        if (it != made.end()) return it->second;
        const Vertex v = boost::add_vertex(HierarchyVertex{label + std::to_string(id)}, g);
        boost::add_edge(parent, v, g);
        made.emplace(std::make_pair(kind, id), v);
        return v;
    };
    for (const CpuInfo& c : t.cpus_) {
        Vertex v = child_of(root, 'p', c.package, "pkg");
        v = child_of(v, 'n', c.node, "node");
        v = child_of(v, 'l', c.llc, "llc");
        if (t.has_clusters_) v = child_of(v, 'k', c.cluster, "cls");
        v = child_of(v, 'c', c.core, "core");
        const Vertex cpu_v = boost::add_vertex(HierarchyVertex{"cpu" + std::to_string(c.id)}, g);
        boost::add_edge(v, cpu_v, g);
        t.graph_->cpu_vertex.push_back(cpu_v);
    }
    return t;
}

Topology Topology::from_compact(std::string name, std::string description, const CompactShape& s) {
    const std::pair<const char*, int> counts[] = {
        {"packages", s.packages},           {"nodes_per_package", s.nodes_per_package},
        {"llcs_per_node", s.llcs_per_node}, {"clusters_per_llc", s.clusters_per_llc},
        {"cores_per_cluster", s.cores_per_cluster}, {"threads_per_core", s.threads_per_core}};
    int64_t product = 1;
    for (const auto& [what, v] : counts) {
        if (v < 1) throw std::invalid_argument(std::string(what) + " must be >= 1, got " + std::to_string(v));
        product *= v;
        if (product > kMaxCpus)
            throw std::invalid_argument("the counts multiply to more than " + std::to_string(kMaxCpus) + " CPUs");
    }
    if (s.threads_per_core > kMaxThreadsPerCore)
        throw std::invalid_argument("threads_per_core must be <= 8, got " + std::to_string(s.threads_per_core));
    const int n = s.nr_cpus();
    if (!s.capacities.empty() && static_cast<int>(s.capacities.size()) != n)
        throw std::invalid_argument("capacities lists " + std::to_string(s.capacities.size()) +
                                    " CPUs but the machine has " + std::to_string(n));
    const int nodes = s.packages * s.nodes_per_package;
    auto distance = s.node_distance.empty() ? default_distance(nodes) : s.node_distance;
    if (static_cast<int>(distance.size()) != nodes)
        throw std::invalid_argument("node_distance has " + std::to_string(distance.size()) +
                                    " rows but the machine has " + std::to_string(nodes) + " nodes");
    return from_cpus(std::move(name), std::move(description), compact_cpus(s), std::move(distance),
                     s.clusters_per_llc > 1);
}

std::optional<CompactShape> Topology::compact_shape() const {
    std::set<int> pkgs, nodes, llcs, clusters, cores;
    for (const CpuInfo& c : cpus_) {
        pkgs.insert(c.package);
        nodes.insert(c.node);
        llcs.insert(c.llc);
        clusters.insert(c.cluster);
        cores.insert(c.core);
    }
    const int np = static_cast<int>(pkgs.size()), nn = static_cast<int>(nodes.size());
    const int nl = static_cast<int>(llcs.size()), nc = static_cast<int>(clusters.size());
    const int nk = static_cast<int>(cores.size());
    if (nn != nr_nodes() || nn % np || nl % nn || nc % nl || nk % nc || nr_cpus() % nk) return std::nullopt;
    CompactShape s;
    s.packages = np;
    s.nodes_per_package = nn / np;
    s.llcs_per_node = nl / nn;
    s.clusters_per_llc = nc / nl;
    s.cores_per_cluster = nk / nc;
    s.threads_per_core = nr_cpus() / nk;
    s.node_distance = node_distance_;
    if (asym_capacity_ || max_capacity_ != 1024)
        for (const CpuInfo& c : cpus_) s.capacities.push_back(c.capacity);

    for (CpuNumbering numbering : {CpuNumbering::siblings_adjacent, CpuNumbering::siblings_split}) {
        if (numbering == CpuNumbering::siblings_split && s.threads_per_core == 1) break;
        s.numbering = numbering;
        const std::vector<CpuInfo> gen = compact_cpus(s);
        // Same machine = same spans and node numbers; the ids of cores, LLCs ... may differ.
        std::map<int, CpuSet> core, cluster, llc, pkg;
        for (const CpuInfo& c : gen) {
            core[c.core].set(c.id);
            cluster[c.cluster].set(c.id);
            llc[c.llc].set(c.id);
            pkg[c.package].set(c.id);
        }
        bool same = true;
        for (const CpuInfo& c : gen) {
            const auto i = static_cast<size_t>(c.id);
            if (c.node != cpus_[i].node || core[c.core] != smt_[i] || cluster[c.cluster] != cluster_[i] ||
                llc[c.llc] != llc_[i] || pkg[c.package] != package_[i]) {
                same = false;
                break;
            }
        }
        if (same) return s;
    }
    return std::nullopt;
}

nlohmann::json Topology::to_json() const {
    nlohmann::json j;
    j["name"] = name_;
    j["description"] = description_;
    if (auto s = compact_shape()) {
        j["packages"] = s->packages;
        j["nodes_per_package"] = s->nodes_per_package;
        j["llcs_per_node"] = s->llcs_per_node;
        j["clusters_per_llc"] = s->clusters_per_llc;
        j["cores_per_cluster"] = s->cores_per_cluster;
        j["threads_per_core"] = s->threads_per_core;
        if (s->threads_per_core > 1) j["numbering"] = to_string(s->numbering);
        if (nr_nodes() > 1 && node_distance_ != default_distance(nr_nodes())) j["node_distance"] = node_distance_;
        if (!s->capacities.empty()) {
            // Runs of equal capacity over cores in id order read better than a per-CPU list.
            const std::vector<CpuInfo> gen = compact_cpus(*s);
            nlohmann::json types = nlohmann::json::array();
            bool uniform_cores = true;
            std::vector<int> core_cap(static_cast<size_t>(s->nr_cpus() / s->threads_per_core), -1);
            for (const CpuInfo& c : gen) {
                int& cap = core_cap[static_cast<size_t>(c.core)];
                if (cap >= 0 && cap != c.capacity) uniform_cores = false;
                cap = c.capacity;
            }
            if (uniform_cores) {
                for (int cap : core_cap) {
                    if (!types.empty() && types.back()["capacity"] == cap)
                        types.back()["count"] = types.back()["count"].get<int>() + 1;
                    else
                        types.push_back({{"count", 1}, {"capacity", cap}});
                }
            }
            if (uniform_cores && types.size() <= 8)
                j["core_types"] = types;
            else
                j["capacities"] = s->capacities;
        }
        return j;
    }
    nlohmann::json list = nlohmann::json::array();
    for (const CpuInfo& c : cpus_) {
        nlohmann::json e = {{"id", c.id}, {"core", c.core}};
        if (has_clusters_) e["cluster"] = c.cluster;
        e["llc"] = c.llc;
        e["package"] = c.package;
        e["node"] = c.node;
        e["capacity"] = c.capacity;
        list.push_back(std::move(e));
    }
    j["cpus"] = std::move(list);
    j["node_distance"] = node_distance_;
    return j;
}

int Topology::graph_vertices() const { return graph_ ? static_cast<int>(boost::num_vertices(graph_->g)) : 0; }

std::string Topology::hierarchy_path(int c) const {
    if (!graph_) return {};
    const HierarchyGraph& g = graph_->g;
    std::string path;
    Vertex v = graph_->cpu_vertex[static_cast<size_t>(c)];
    while (true) {
        const std::string& label = g[v].label;
        if (label.empty()) break;  // the root
        path = path.empty() ? label : label + "/" + path;
        auto [first, last] = boost::in_edges(v, g);
        if (first == last) break;
        v = boost::source(*first, g);
    }
    return path;
}

}  // namespace wakesim
