// The machine's CPU hierarchy behind one facade: hot-path queries are CpuSet lookups; the
// Boost.Graph hierarchy (package > node > LLC > cluster > core > CPU) lives in topology.cpp.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "topology/cpuset.h"

namespace wakesim {

struct CpuInfo {
    int id = 0;
    int core = 0;      // global core id (SMT siblings share it)
    int cluster = 0;   // global cluster id (== llc when the machine has no clusters)
    int llc = 0;       // global LLC id
    int package = 0;
    int node = 0;      // NUMA node
    int capacity = 1024;  // arch_scale_cpu_capacity, 1..1024
};

inline constexpr int kLocalNodeDistance = 10;      // LOCAL_DISTANCE: a node to itself
inline constexpr int kDefaultRemoteDistance = 21;  // remote default (most two-socket x86 SLITs)
inline constexpr int kMaxNodeDistance = 255;       // a SLIT entry is one byte
inline constexpr int kMaxThreadsPerCore = 8;       // POWER8 SMT-8 is the widest shipped

// How far a task moved, for migration metrics and cost lookups.
enum class CpuDistance { same_cpu, smt, cluster, llc, cross_llc, cross_numa };
const char* to_string(CpuDistance d);

// How SMT siblings are numbered in the compact form.
enum class CpuNumbering {
    siblings_adjacent,  // core c owns CPUs c*T .. c*T+T-1 (most arm64, AMD desktop BIOSes)
    siblings_split,     // thread k of core c is CPU c + k*ncores (most Intel/AMD servers)
};
const char* to_string(CpuNumbering n);

// A regular machine: every count is per parent, ids are assigned in order (see docs/topology.md).
struct CompactShape {
    int packages = 1;
    int nodes_per_package = 1;
    int llcs_per_node = 1;
    int clusters_per_llc = 1;  // > 1 makes a CLS level
    int cores_per_cluster = 1;
    int threads_per_core = 1;
    CpuNumbering numbering = CpuNumbering::siblings_adjacent;
    std::vector<int> capacities;                   // per CPU id; empty = all 1024
    std::vector<std::vector<int>> node_distance;  // empty = 10 local, 21 remote
    int nr_cpus() const {
        return packages * nodes_per_package * llcs_per_node * clusters_per_llc * cores_per_cluster *
               threads_per_core;
    }
};

class Topology {
public:
    // Builds from an explicit CPU list (ids must be 0..n-1) and a node distance matrix (nodes x
    // nodes, diagonal 10). Throws std::invalid_argument describing the first inconsistency.
    // When has_clusters is false the cluster ids are ignored (each cluster is its LLC).
    static Topology from_cpus(std::string name, std::string description, std::vector<CpuInfo> cpus,
                              std::vector<std::vector<int>> node_distance, bool has_clusters);
    // Builds a regular machine; throws std::invalid_argument on impossible counts.
    static Topology from_compact(std::string name, std::string description, const CompactShape& shape);
    // The compact shape that rebuilds this machine exactly, if there is one.
    std::optional<CompactShape> compact_shape() const;

    const std::string& name() const { return name_; }
    const std::string& description() const { return description_; }
    int nr_cpus() const { return static_cast<int>(cpus_.size()); }
    int nr_nodes() const { return static_cast<int>(node_distance_.size()); }
    const CpuInfo& cpu(int c) const { return cpus_[c]; }
    const std::vector<CpuInfo>& cpus() const { return cpus_; }
    const CpuSet& all() const { return all_; }

    // Spans containing cpu c (each includes c).
    const CpuSet& smt_siblings(int c) const { return smt_[c]; }
    // The same CPUs as a list in ascending order: what a hot path walks (a CpuSet walk visits all
    // of its 16 words).
    std::span<const int> smt_list(int c) const {
        const auto i = static_cast<size_t>(c);
        return {smt_list_.data() + smt_off_[i], smt_list_.data() + smt_off_[i + 1]};
    }
    const CpuSet& cluster_span(int c) const { return cluster_[c]; }
    const CpuSet& llc_span(int c) const { return llc_[c]; }
    const CpuSet& package_span(int c) const { return package_[c]; }
    const CpuSet& node_span(int c) const { return node_[c]; }
    const CpuSet& node_cpus(int node) const { return node_cpus_[node]; }

    bool shares_llc(int a, int b) const { return cpus_[a].llc == cpus_[b].llc; }
    bool same_core(int a, int b) const { return cpus_[a].core == cpus_[b].core; }
    int node_distance(int node_a, int node_b) const { return node_distance_[node_a][node_b]; }
    int cpu_distance(int a, int b) const { return node_distance_[cpus_[a].node][cpus_[b].node]; }
    CpuDistance classify(int from, int to) const {  // inline: the wake path and cache model ask it per event
        if (from == to) return CpuDistance::same_cpu;
        const CpuInfo& a = cpus_[static_cast<size_t>(from)];
        const CpuInfo& b = cpus_[static_cast<size_t>(to)];
        if (a.core == b.core) return CpuDistance::smt;
        const auto f = static_cast<size_t>(from);
        if (a.cluster == b.cluster && has_clusters_ && cluster_[f] != llc_[f]) return CpuDistance::cluster;
        if (a.llc == b.llc) return CpuDistance::llc;
        if (a.node == b.node) return CpuDistance::cross_llc;
        return CpuDistance::cross_numa;
    }

    bool smt_present() const { return smt_present_; }       // some core has >= 2 threads
    bool has_clusters() const { return has_clusters_; }
    bool asym_capacity() const { return asym_capacity_; }    // >= 2 distinct capacities
    int max_capacity() const { return max_capacity_; }

    // Compact-or-explicit JSON that topology_from_json() reads back to the same machine.
    nlohmann::json to_json() const;

    // Number of vertices/edges of the hierarchy graph (for `topo show`).
    int graph_vertices() const;
    // Path of hierarchy levels from the root to the CPU (e.g. "pkg0/node0/llc0/core3/cpu3").
    std::string hierarchy_path(int c) const;

    Topology();
    ~Topology();
    Topology(const Topology&);
    Topology& operator=(const Topology&);
    Topology(Topology&&) noexcept;
    Topology& operator=(Topology&&) noexcept;

private:
    struct Graph;
    std::string name_, description_;
    std::vector<CpuInfo> cpus_;
    std::vector<std::vector<int>> node_distance_;
    CpuSet all_;
    std::vector<CpuSet> smt_, cluster_, llc_, package_, node_, node_cpus_;
    std::vector<int> smt_list_;  // smt_[c]'s CPUs for every c, one after the other
    std::vector<size_t> smt_off_;  // c's list starts at smt_off_[c], ends at smt_off_[c + 1]
    bool smt_present_ = false, has_clusters_ = false, asym_capacity_ = false;
    int max_capacity_ = 1024;
    std::unique_ptr<Graph> graph_;
};

class JsonNode;
// Reads a topology description (compact form or explicit "cpus" list). Errors are InputError.
Topology topology_from_json(const JsonNode& node);
// The same under the given name and description (the node has no "name" or "description").
Topology topology_from_json(const JsonNode& node, std::string name, std::string description);

// Machines are data: one JSON file per machine, <name>.json, in the machines directory
// (docs/machines.md). That directory is the one given to set_machines_dir() (the --machines
// option), else $WAKESIM_MACHINES, else <program dir>/../share/wakesim/machines (installed), else
// the source tree's machines/. An explicit directory that does not exist is an InputError.
void set_machines_dir(std::string dir);
std::string machines_dir();
std::string machine_name_hint(const std::string& s);   // a near machine name, or ""
std::vector<std::string> machine_names();               // the files' names without .json, sorted
std::string machine_names_text();                       // "altra-80, bl-4-3-1, ...", for messages
bool is_machine_path(const std::string& s);             // has a '/' or ends in .json: a file, not a name
bool is_machine_name(const std::string& s);             // a machine of the machines directory
std::string machine_path(const std::string& name);      // throws std::out_of_range naming the machines
std::string machine_name_of(const std::string& path);   // the file name without .json
// A machine file's topology, named after the file (doc.file()), with the file's "description".
// Checks the document's top-level keys; errors are InputError.
Topology machine_topology_from_json(const JsonNode& doc);
// The topology of the machine `name` in the machines directory; throws std::out_of_range if unknown.
Topology make_topology_preset(const std::string& name);

// Reads a copy of /sys/devices/system/cpu (topology/, cache/index*/shared_cpu_list,
// cpu_capacity) plus, if present next to it, ../node/node*/distance. Errors are InputError.
Topology import_sysfs(const std::string& dir);

}  // namespace wakesim
