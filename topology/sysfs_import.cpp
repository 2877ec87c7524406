// Builds a Topology from a copy of /sys/devices/system/cpu (plus ../node when present), the way
// the kernel derives its masks: SMT from core_cpus_list, LLC from the highest data/unified cache,
// clusters from cluster_cpus_list, NUMA from node directories. Offline CPUs are skipped and the
// online ones renumbered 0..n-1 in sysfs order.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "input/json_input.h"
#include "topology/topology.h"

namespace wakesim {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad(const fs::path& p, const std::string& expected) {
    throw InputError(p.string(), "", expected);
}

// sysfs attributes are a page at most; a copy of one may be larger, but not without bound.
constexpr size_t kMaxSysfsFileBytes = size_t{1} << 20;

std::optional<std::string> read_text(const fs::path& p) {
    std::error_code ec;
    if (!fs::exists(p, ec)) return std::nullopt;
    std::string s = read_text_file(p.string(), kMaxSysfsFileBytes, "a sysfs attribute file");
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t b = 0;
    while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    return s.substr(b);
}

std::string require_text(const fs::path& p, const std::string& what) {
    auto t = read_text(p);
    if (!t) bad(p, "expected this file to exist: " + what);
    return *t;
}

int parse_int(const fs::path& p, const std::string& text, long min, long max, const std::string& what) {
    try {
        size_t used = 0;
        const long v = std::stol(text, &used);
        if (used == text.size() && v >= min && v <= max) return static_cast<int>(v);
    } catch (const std::exception&) {
    }
    bad(p, "expected " + what + " (an integer in " + std::to_string(min) + ".." + std::to_string(max) + "), got " +
               quote_for_message(text));
}

CpuSet parse_set(const fs::path& p, const std::string& text) {
    CpuSet s;
    if (text.empty()) return s;  // a node without CPUs
    try {
        for (int c : parse_cpu_list(text)) s.set(c);
    } catch (const std::invalid_argument& e) {
        bad(p, e.what());
    }
    return s;
}

// Numbered children "prefixN" of a directory, sorted by N.
std::vector<std::pair<int, fs::path>> numbered(const fs::path& dir, const std::string& prefix) {
    std::vector<std::pair<int, fs::path>> out;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return out;
    const std::regex re(prefix + "([0-9]+)");
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        std::smatch m;
        const std::string name = e.path().filename().string();
        if (!std::regex_match(name, m, re) || m[1].length() >= 7) continue;
        // The kernel writes cpu1, never cpu01: a copy with both would import one CPU twice.
        if (m[1].length() > 1 && m[1].str()[0] == '0')
            bad(e.path(), "expected a sysfs name without leading zeros (the kernel writes " + prefix +
                              std::to_string(std::stoi(m[1].str())) + "), got " + quote_for_message(name));
        out.emplace_back(std::stoi(m[1].str()), e.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// What one online CPU's files say, in sysfs CPU numbers.
struct SysCpu {
    int sys_id = 0;
    fs::path dir;
    int package = 0;
    int core_id = 0;
    CpuSet siblings;  // empty: unknown, group by (package, core_id)
    fs::path siblings_file;
    CpuSet cluster;   // empty: no cluster information
    int cluster_id = -1;
    fs::path cluster_file;
    CpuSet llc;       // empty: no cache information
    fs::path llc_file;
    int node = -1;    // sysfs node number, -1: unknown
    int capacity = 1024;
};

// Checks that the per-CPU lists of one kind partition the CPUs (cpu A lists B => B lists A's set).
void check_partition(const std::vector<SysCpu>& cpus, const std::map<int, size_t>& index,
                     CpuSet SysCpu::*set, fs::path SysCpu::*file, const char* what) {
    for (const SysCpu& c : cpus) {
        const CpuSet& mine = c.*set;
        if (mine.empty()) continue;
        if (!mine.test(c.sys_id)) bad(c.*file, std::string("expected a ") + what + " list that includes cpu" +
                                                   std::to_string(c.sys_id) + " itself");
        mine.for_each([&](int m) {
            const SysCpu& o = cpus[index.at(m)];
            if (o.*set != mine)
                bad(o.*file, std::string("expected the same ") + what + " list as " + (c.*file).string() + " (" +
                                 mine.to_list() + "), got " + (o.*set).to_list());
        });
    }
}

// Dense ids in order of first appearance.
template <class Key>
int dense(std::map<Key, int>& ids, const Key& k) {
    return ids.emplace(k, static_cast<int>(ids.size())).first->second;
}

// A machine name from free text ("PowerEdge R750" -> "poweredge-r750"): lower case, letters,
// digits, '.', '_' and '-', other runs of characters one '-'.
std::string name_from_text(const std::string& text) {
    std::string out;
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (std::isalnum(c) || ch == '.' || ch == '_' || ch == '-')
            out += static_cast<char>(std::tolower(c));
        else if (!out.empty() && out.back() != '-')
            out += '-';
        if (out.size() >= 64) break;
    }
    while (!out.empty() && (out.back() == '-' || out.back() == '.')) out.pop_back();
    return out;
}

// The name an imported machine gets: the machine's product name when the copy keeps the DMI
// tables beside the CPUs (devices/virtual/dmi/id/product_name, as /sys has it), then the host
// name when `root` is this machine's live /sys, then the folder the copy sits in. Placeholder
// product names that firmware leaves unset are skipped.
std::string machine_name(const fs::path& root) {
    static const char* const kPlaceholders[] = {"to-be-filled-by-o.e.m", "system-product-name", "default-string",
                                                "none", "not-specified", "not-applicable", "o.e.m", "unknown"};
    auto usable = [](const std::string& n) {
        if (n.empty()) return false;
        for (const char* p : kPlaceholders)
            if (n == p) return false;
        return true;
    };
    std::error_code ec;
    const fs::path dmi = root.parent_path().parent_path() / "virtual" / "dmi" / "id" / "product_name";
    if (fs::is_regular_file(dmi, ec))
        if (auto t = read_text(dmi); t && usable(name_from_text(*t))) return name_from_text(*t);
    if (fs::equivalent(root, "/sys/devices/system/cpu", ec))
        if (auto t = read_text("/proc/sys/kernel/hostname"); t && usable(name_from_text(*t))) return name_from_text(*t);
    std::string name = root.filename().string();
    if (name == "cpu" && root.has_parent_path()) name = root.parent_path().filename().string();
    const std::string cleaned = name_from_text(name);
    return usable(cleaned) && cleaned != "system" ? cleaned : "imported";
}

}  // namespace

Topology import_sysfs(const std::string& dir) {
    fs::path root = fs::path(dir).lexically_normal();
    if (root.has_filename() == false && root.has_parent_path()) root = root.parent_path();
    std::error_code ec;
    if (!fs::is_directory(root, ec)) bad(dir, "expected a directory holding a copy of /sys/devices/system/cpu");
    const auto entries = numbered(root, "cpu");
    if (entries.empty()) {
        // Given /sys (or a copy of it) rather than its devices/system/cpu: say where to look.
        const fs::path below = root / "devices" / "system" / "cpu";
        if (fs::is_directory(below, ec) && !numbered(below, "cpu").empty())
            bad(dir, "expected cpu0, cpu1, ... directories; they are in " + below.string() + ": pass that directory");
        bad(dir, "expected cpu0, cpu1, ... directories (a copy of /sys/devices/system/cpu)");
    }

    std::optional<CpuSet> online;
    if (auto t = read_text(root / "online")) online = parse_set(root / "online", *t);

    std::vector<SysCpu> cpus;
    std::map<int, size_t> index;  // sysfs id -> position in cpus
    std::vector<int> offline;
    for (const auto& [id, path] : entries) {
        if (id >= kMaxCpus) bad(path, "expected CPU numbers below " + std::to_string(kMaxCpus));
        // Offline when cpu/online leaves it out or its own cpuN/online says 0 (the two agree on a
        // live system; a copy that has either is read as the docs say).
        bool up = online ? online->test(id) : true;
        if (auto t = read_text(path / "online")) up = up && parse_int(path / "online", *t, 0, 1, "0 or 1") == 1;
        if (!up) {
            offline.push_back(id);
            continue;
        }
        SysCpu c;
        c.sys_id = id;
        c.dir = path;
        index[id] = cpus.size();
        cpus.push_back(c);
    }
    if (cpus.empty()) bad(root / "online", "expected at least one online CPU");

    CpuSet up;
    for (const SysCpu& c : cpus) up.set(c.sys_id);

    for (SysCpu& c : cpus) {
        const fs::path topo = c.dir / "topology";
        const fs::path pkg = topo / "physical_package_id";
        c.package = parse_int(pkg, require_text(pkg, "the CPU's package number"), 0, 1 << 20, "a package id");
        const fs::path core = topo / "core_id";
        c.core_id = parse_int(core, require_text(core, "the CPU's core number"), 0, 1 << 30, "a core id");
        for (const char* f : {"core_cpus_list", "thread_siblings_list"}) {
            if (auto t = read_text(topo / f)) {
                const CpuSet listed = parse_set(topo / f, *t);
                if (!listed.test(c.sys_id))
                    bad(topo / f, "expected an SMT sibling list that includes cpu" + std::to_string(c.sys_id) +
                                      " itself, got " + quote_for_message(listed.to_list()));
                c.siblings = listed & up;
                c.siblings_file = topo / f;
                break;
            }
        }
        if (auto t = read_text(topo / "cluster_cpus_list")) {
            c.cluster = parse_set(topo / "cluster_cpus_list", *t) & up;
            c.cluster_file = topo / "cluster_cpus_list";
        } else if (auto id = read_text(topo / "cluster_id")) {
            c.cluster_id = parse_int(topo / "cluster_id", *id, -1, 1 << 30, "a cluster id");
            c.cluster_file = topo / "cluster_id";
        }
        // LLC: the highest-level cache that holds data (Unified or Data; Instruction never).
        int best_level = 0;
        for (const auto& [k, idx] : numbered(c.dir / "cache", "index")) {
            const int level = parse_int(idx / "level", require_text(idx / "level", "the cache level"), 1, 9,
                                        "a cache level");
            const std::string type = require_text(idx / "type", "Data, Instruction or Unified");
            if (type != "Data" && type != "Unified" && type != "Instruction")
                bad(idx / "type", "expected Data, Instruction or Unified, got " + quote_for_message(type));
            if (type == "Instruction" || level <= best_level) continue;
            const fs::path shared = idx / "shared_cpu_list";
            const CpuSet listed = parse_set(shared, require_text(shared, "the CPUs sharing this cache"));
            // A cache is shared by the CPU whose directory it is in; checked before the list is cut
            // to the online CPUs and the node, which could leave it empty and the check unmade.
            if (!listed.test(c.sys_id))
                bad(shared, "expected a cache shared_cpu_list that includes cpu" + std::to_string(c.sys_id) +
                                " itself, got " + quote_for_message(listed.to_list()));
            c.llc = listed & up;
            c.llc_file = shared;
            best_level = level;
        }
        if (auto t = read_text(c.dir / "cpu_capacity"))
            c.capacity = parse_int(c.dir / "cpu_capacity", *t, 1, 1024, "a CPU capacity");
        if (auto nodes = numbered(c.dir, "node"); !nodes.empty()) c.node = nodes.front().first;
    }

    // NUMA nodes from ../node/nodeK/{cpulist,distance}, when the copy has them.
    const fs::path node_root = root.parent_path() / "node";
    const auto node_dirs = numbered(node_root, "node");
    std::map<int, std::vector<int>> distance_rows;  // sysfs node -> row over node_dirs order
    for (const auto& [k, path] : node_dirs) {
        if (auto t = read_text(path / "cpulist")) {
            const CpuSet members = parse_set(path / "cpulist", *t);
            for (SysCpu& c : cpus)
                if (members.test(c.sys_id)) {
                    if (c.node >= 0 && c.node != k)
                        bad(path / "cpulist", "expected each CPU in one node; CPU " + std::to_string(c.sys_id) +
                                                  " is in node" + std::to_string(c.node) + "'s cpulist too");
                    c.node = k;
                }
        }
        if (auto t = read_text(path / "distance")) {
            std::istringstream in(*t);
            std::vector<int> row;
            std::string word;
            while (in >> word)
                row.push_back(parse_int(path / "distance", word, kLocalNodeDistance, kMaxNodeDistance, "a distance"));
            if (row.size() != node_dirs.size())
                bad(path / "distance", "expected " + std::to_string(node_dirs.size()) +
                                           " distances (one per node directory), got " + std::to_string(row.size()));
            distance_rows[k] = row;
        }
    }
    for (SysCpu& c : cpus)
        if (c.node < 0) c.node = 0;

    // Nodes that hold online CPUs, renumbered densely.
    std::map<int, int> node_ids;
    for (const SysCpu& c : cpus) node_ids.emplace(c.node, 0);
    {
        int next = 0;
        for (auto& [k, v] : node_ids) v = next++;
    }
    std::map<int, CpuSet> node_members;
    for (const SysCpu& c : cpus) node_members[c.node].set(c.sys_id);

    std::string notes;
    const int nodes = static_cast<int>(node_ids.size());
    std::vector<std::vector<int>> distance(static_cast<size_t>(nodes),
                                           std::vector<int>(static_cast<size_t>(nodes), kDefaultRemoteDistance));
    for (int a = 0; a < nodes; ++a) distance[static_cast<size_t>(a)][static_cast<size_t>(a)] = kLocalNodeDistance;
    if (nodes > 1) {
        std::map<int, size_t> column;  // sysfs node -> column in a distance row
        for (size_t j = 0; j < node_dirs.size(); ++j) column[node_dirs[j].first] = j;
        for (const auto& [ka, a] : node_ids) {
            auto row = distance_rows.find(ka);
            if (row == distance_rows.end() || !column.count(ka)) {
                notes += "; node distances not found, " + std::to_string(kDefaultRemoteDistance) + " assumed";
                break;
            }
            for (const auto& [kb, b] : node_ids)
                if (column.count(kb))
                    distance[static_cast<size_t>(a)][static_cast<size_t>(b)] = row->second[column[kb]];
        }
        // The scheduler's NUMA levels assume a symmetric table: name the file that breaks it.
        for (const auto& [ka, a] : node_ids)
            for (const auto& [kb, b] : node_ids) {
                const int ab = distance[static_cast<size_t>(a)][static_cast<size_t>(b)];
                const int ba = distance[static_cast<size_t>(b)][static_cast<size_t>(a)];
                if (ka < kb && ab != ba)
                    bad(node_root / ("node" + std::to_string(ka)) / "distance",
                        "expected the distance to node" + std::to_string(kb) + " (" + std::to_string(ab) +
                            ") to equal node" + std::to_string(kb) + "'s to node" + std::to_string(ka) + " (" +
                            std::to_string(ba) + ")");
            }
    }

    // Kernel-style mask shaping, then partitions and dense ids.
    for (SysCpu& c : cpus) {
        const CpuSet& node_set = node_members[c.node];
        if (c.siblings.empty()) {
            for (const SysCpu& o : cpus)
                if (o.package == c.package && o.core_id == c.core_id) c.siblings.set(o.sys_id);
            c.siblings_file = c.dir / "topology" / "core_id";
        }
        if (c.llc.empty()) {
            // No cache information: the package is the LLC, as cpu_coregroup_mask() falls back to.
            for (const SysCpu& o : cpus)
                if (o.package == c.package) c.llc.set(o.sys_id);
            c.llc_file = c.dir / "topology" / "physical_package_id";
        }
        // x86 match_llc(): with sub-NUMA clustering an LLC never spans nodes.
        c.llc &= node_set;
        if (c.cluster.empty() && c.cluster_id >= 0) {
            for (const SysCpu& o : cpus)
                if (o.package == c.package && o.cluster_id == c.cluster_id) c.cluster.set(o.sys_id);
        }
        if (!c.cluster.empty()) {
            // arm64 cpu_clustergroup_mask(): a cluster no smaller than the LLC is no cluster.
            c.cluster &= c.llc;
            if (c.cluster == c.llc) c.cluster = c.siblings;
        }
    }
    check_partition(cpus, index, &SysCpu::siblings, &SysCpu::siblings_file, "SMT sibling");
    check_partition(cpus, index, &SysCpu::llc, &SysCpu::llc_file, "cache shared_cpu_list");
    bool has_clusters = false;
    for (const SysCpu& c : cpus)
        if (!c.cluster.empty()) has_clusters = true;
    if (has_clusters) {
        for (SysCpu& c : cpus)
            if (c.cluster.empty()) {  // mixed information: a CPU without it is a one-core cluster
                c.cluster = c.siblings;
                c.cluster_file = c.siblings_file;
            }
        check_partition(cpus, index, &SysCpu::cluster, &SysCpu::cluster_file, "cluster");
    }

    std::map<int, int> core_ids, cluster_ids, llc_ids, pkg_ids;
    std::vector<CpuInfo> infos;
    for (const SysCpu& c : cpus) {
        CpuInfo i;
        i.id = static_cast<int>(infos.size());
        i.core = dense(core_ids, c.siblings.first());
        i.llc = dense(llc_ids, c.llc.first());
        i.cluster = has_clusters ? dense(cluster_ids, c.cluster.first()) : i.llc;
        i.package = dense(pkg_ids, c.package);
        i.node = node_ids[c.node];
        i.capacity = c.capacity;
        infos.push_back(i);
    }

    const std::string name = machine_name(root);
    std::string description = "imported from " + root.string() + ": " + std::to_string(infos.size()) + " online CPUs";
    if (!offline.empty()) {
        std::string list;
        for (int o : offline) {
            if (!list.empty()) list += ',';
            list += std::to_string(o);
        }
        description += "; offline CPUs ignored: " + list;
        if (offline.front() < cpus.back().sys_id)
            description += " (online CPUs renumbered 0.." + std::to_string(infos.size() - 1) + ")";
    }
    description += notes;
    try {
        return Topology::from_cpus(name, description, std::move(infos), std::move(distance), has_clusters);
    } catch (const std::invalid_argument& e) {
        bad(root, std::string("expected a consistent topology: ") + e.what());
    }
}

}  // namespace wakesim
