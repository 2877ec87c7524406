// Strict reader for topology JSON: the compact form (counts per level) and the explicit form (a
// "cpus" list, what to_json() writes for irregular machines). Key reference: docs/topology.md.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "input/json_input.h"
#include "topology/topology.h"

namespace wakesim {

namespace {

// Reads an n x n SLIT-like matrix with its errors pointing at the offending entry.
std::vector<std::vector<int>> read_distance(const JsonNode& m, int nodes) {
    if (static_cast<int>(m.size()) != nodes)
        m.fail("expected " + std::to_string(nodes) + " rows (one per NUMA node), got " + std::to_string(m.size()));
    std::vector<std::vector<int>> d(static_cast<size_t>(nodes));
    for (int a = 0; a < nodes; ++a) {
        const JsonNode row = m[static_cast<size_t>(a)];
        if (static_cast<int>(row.size()) != nodes)
            row.fail("expected " + std::to_string(nodes) + " distances, got " + std::to_string(row.size()));
        for (int b = 0; b < nodes; ++b) {
            const JsonNode e = row[static_cast<size_t>(b)];
            if (a == b) {
                if (e.as_int(0, kMaxNodeDistance) != kLocalNodeDistance)
                    e.fail("expected 10 on the diagonal (a node's distance to itself)");
                d[static_cast<size_t>(a)].push_back(kLocalNodeDistance);
            } else {
                // The kernel rejects a SLIT whose remote entry is <= the local distance.
                const int64_t v = e.as_int(kLocalNodeDistance + 1, kMaxNodeDistance);
                d[static_cast<size_t>(a)].push_back(static_cast<int>(v));
            }
        }
    }
    for (int a = 0; a < nodes; ++a)
        for (int b = 0; b < a; ++b)
            if (d[static_cast<size_t>(a)][static_cast<size_t>(b)] != d[static_cast<size_t>(b)][static_cast<size_t>(a)])
                m[static_cast<size_t>(a)][static_cast<size_t>(b)].fail(
                    "expected a symmetric matrix: node_distance[" + std::to_string(b) + "][" + std::to_string(a) +
                    "] is " + std::to_string(d[static_cast<size_t>(b)][static_cast<size_t>(a)]));
    return d;
}

Topology read_compact(const JsonNode& node, std::string name, std::string description) {
    // The keys and counts first, every mistake of them; the parts that depend on the counts after.
    InputErrorCollector errors;
    errors.attempt([&] {
        node.check_keys({"name", "description", "packages", "nodes_per_package", "llcs_per_node", "clusters_per_llc",
                         "cores_per_cluster", "threads_per_core", "numbering", "node_distance", "capacities",
                         "core_types"});
    });
    CompactShape s;
    auto count = [&](int& field, const char* key, int64_t max) {
        errors.attempt([&] { field = static_cast<int>(node.int_or(key, 1, 1, max)); });
    };
    count(s.packages, "packages", kMaxCpus);
    count(s.nodes_per_package, "nodes_per_package", kMaxCpus);
    count(s.llcs_per_node, "llcs_per_node", kMaxCpus);
    count(s.clusters_per_llc, "clusters_per_llc", kMaxCpus);
    count(s.cores_per_cluster, "cores_per_cluster", kMaxCpus);
    count(s.threads_per_core, "threads_per_core", kMaxThreadsPerCore);
    errors.attempt([&] {
        if (auto v = node.get("numbering"))
            s.numbering = v->as_enum({"siblings_adjacent", "siblings_split"}) == "siblings_split"
                              ? CpuNumbering::siblings_split
                              : CpuNumbering::siblings_adjacent;
    });
    const auto caps = node.get("capacities");
    const auto types = node.get("core_types");
    if (caps && types) errors.attempt([&] { types->fail("expected either \"capacities\" or \"core_types\", not both"); });
    errors.finish();
    const int64_t total = int64_t{s.packages} * s.nodes_per_package * s.llcs_per_node * s.clusters_per_llc *
                          s.cores_per_cluster * s.threads_per_core;
    if (total > kMaxCpus)
        node.fail("expected at most " + std::to_string(kMaxCpus) + " CPUs in total; packages x nodes_per_package x "
                  "llcs_per_node x clusters_per_llc x cores_per_cluster x threads_per_core = " +
                  std::to_string(total) + " is absurd");
    const int n = static_cast<int>(total);
    const int ncores = n / s.threads_per_core;
    const int nodes = s.packages * s.nodes_per_package;
    if (auto v = node.get("node_distance")) errors.attempt([&] { s.node_distance = read_distance(*v, nodes); });

    if (caps) errors.attempt([&] {
        if (static_cast<int>(caps->size()) != n)
            caps->fail("expected one capacity per CPU (" + std::to_string(n) + "), got " +
                       std::to_string(caps->size()));
        for (size_t i = 0; i < caps->size(); ++i)
            errors.attempt([&] { s.capacities.push_back(static_cast<int>((*caps)[i].as_int(1, 1024))); });
        // sd_init() warns "CPU capacity asymmetry not supported on SMT": siblings share a core.
        if (static_cast<int>(s.capacities.size()) == n && s.threads_per_core > 1)
            for (int cpu = 0; cpu < n; ++cpu) {
                const int first = s.numbering == CpuNumbering::siblings_adjacent ? cpu - cpu % s.threads_per_core : cpu % ncores;
                if (s.capacities[static_cast<size_t>(cpu)] != s.capacities[static_cast<size_t>(first)])
                    errors.attempt([&] {
                        (*caps)[static_cast<size_t>(cpu)].fail(
                            "expected the capacity of CPU " + std::to_string(first) + ", its SMT sibling (" +
                            std::to_string(s.capacities[static_cast<size_t>(first)]) +
                            "): Linux supports no capacity asymmetry within a core");
                    });
            }
    });
    if (types) errors.attempt([&] {
        if (types->size() == 0) types->fail("expected at least one core type");
        std::vector<int> core_cap;
        InputErrorCollector type_errors;  // every bad core type
        for (size_t i = 0; i < types->size(); ++i) type_errors.attempt([&] {
            const JsonNode t = (*types)[i];
            InputErrorCollector fields;
            fields.attempt([&] { t.check_keys({"count", "capacity", "name"}); });
            int n_cores = 0, cap = 0;
            fields.attempt([&] { n_cores = static_cast<int>(t.at("count").as_int(1, kMaxCpus)); });
            fields.attempt([&] { cap = static_cast<int>(t.at("capacity").as_int(1, 1024)); });
            fields.attempt([&] {
                if (auto nm = t.get("name")) (void)nm->as_string();
            });
            fields.finish();
            for (int k = 0; k < n_cores; ++k) core_cap.push_back(cap);
        });
        type_errors.finish();
        if (static_cast<int>(core_cap.size()) != ncores)
            types->fail("expected counts adding up to the " + std::to_string(ncores) + " cores, got " +
                        std::to_string(core_cap.size()));
        // Core c (in id order) owns the CPUs that from_compact numbers for it.
        s.capacities.assign(static_cast<size_t>(n), 1024);
        for (int cpu = 0; cpu < n; ++cpu) {
            const int core = s.numbering == CpuNumbering::siblings_adjacent ? cpu / s.threads_per_core : cpu % ncores;
            s.capacities[static_cast<size_t>(cpu)] = core_cap[static_cast<size_t>(core)];
        }
    });
    errors.finish();
    try {
        return Topology::from_compact(std::move(name), std::move(description), s);
    } catch (const std::invalid_argument& e) {
        node.fail(std::string("expected a consistent machine: ") + e.what());
    }
}

Topology read_explicit(const JsonNode& node, std::string name, std::string description) {
    InputErrorCollector errors;  // every unknown key and bad CPU entry, each on its own line
    errors.attempt([&] { node.check_keys({"name", "description", "cpus", "node_distance"}); });
    const JsonNode list = node.at("cpus");
    const size_t n = list.size();
    if (n == 0) list.fail("expected at least one CPU");
    if (n > static_cast<size_t>(kMaxCpus))
        list.fail("expected at most " + std::to_string(kMaxCpus) + " CPUs, got " + std::to_string(n));
    std::vector<std::vector<int>> distance = {{kLocalNodeDistance}};
    int nodes = 1;
    if (auto d = node.get("node_distance")) {
        nodes = std::max(static_cast<int>(d->size()), 1);
        errors.attempt([&] {
            if (d->size() == 0) d->fail("expected at least one row");
            distance = read_distance(*d, nodes);
        });
    }
    std::vector<CpuInfo> cpus;
    std::vector<bool> seen(n, false);
    bool has_clusters = false;
    for (size_t i = 0; i < n; ++i) errors.attempt([&] {
        const JsonNode e = list[i];
        e.require_object();
        InputErrorCollector fields;  // every field of this CPU
        fields.attempt([&] { e.check_keys({"id", "core", "cluster", "llc", "package", "node", "capacity"}); });
        CpuInfo c;
        fields.attempt([&] {
            const JsonNode id = e.at("id");
            c.id = static_cast<int>(id.as_int(0, static_cast<int64_t>(n) - 1));
            if (seen[static_cast<size_t>(c.id)]) id.fail("expected each CPU id once; " + std::to_string(c.id) + " repeats");
            seen[static_cast<size_t>(c.id)] = true;
        });
        fields.attempt([&] { c.core = static_cast<int>(e.at("core").as_int(0, 1 << 20)); });
        fields.attempt([&] { c.llc = static_cast<int>(e.at("llc").as_int(0, 1 << 20)); });
        fields.attempt([&] {
            c.cluster = c.llc;
            if (auto cl = e.get("cluster")) {
                c.cluster = static_cast<int>(cl->as_int(0, 1 << 20));
                has_clusters = true;
            }
        });
        fields.attempt([&] { c.package = static_cast<int>(e.at("package").as_int(0, 1 << 20)); });
        fields.attempt([&] { c.node = static_cast<int>(e.at("node").as_int(0, nodes - 1)); });
        fields.attempt([&] { c.capacity = static_cast<int>(e.int_or("capacity", 1024, 1, 1024)); });
        fields.finish();
        cpus.push_back(c);
    });
    errors.finish();
    // A cluster on some CPUs only would put the others in a cluster nobody wrote (their LLC's).
    if (has_clusters)
        for (size_t i = 0; i < n; ++i)
            if (!list[i].has("cluster"))
                errors.attempt([&] { list[i].fail("expected \"cluster\" on every CPU or on none; this CPU has none"); });
    // sd_init() warns "CPU capacity asymmetry not supported on SMT": siblings share a core.
    for (size_t i = 0; i < cpus.size(); ++i)
        for (size_t k = 0; k < i; ++k)
            if (cpus[k].package == cpus[i].package && cpus[k].core == cpus[i].core && cpus[k].capacity != cpus[i].capacity) {
                errors.attempt([&] {
                    list[i].fail("expected the capacity of CPU " + std::to_string(cpus[k].id) + ", its SMT sibling (" +
                                 std::to_string(cpus[k].capacity) + "): Linux supports no capacity asymmetry within a core");
                });
                break;
            }
    errors.finish();
    try {
        return Topology::from_cpus(std::move(name), std::move(description), std::move(cpus), std::move(distance),
                                   has_clusters);
    } catch (const std::invalid_argument& e) {
        list.fail(std::string("expected a consistent machine: ") + e.what());
    }
}

}  // namespace

// The JSON counterpart of Topology::from_compact / from_cpus.
Topology topology_from_json(const JsonNode& node, std::string name, std::string description) {
    node.require_object();
    if (node.has("cpus")) return read_explicit(node, std::move(name), std::move(description));
    return read_compact(node, std::move(name), std::move(description));
}

Topology topology_from_json(const JsonNode& node) {
    node.require_object();
    return topology_from_json(node, node.string_or("name", "custom"), node.string_or("description", ""));
}

}  // namespace wakesim
