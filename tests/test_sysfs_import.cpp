// Importing a machine from a copy of /sys/devices/system/cpu (fake trees under tests/data/).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "input/json_input.h"
#include "topology/sched_domains.h"

#ifndef WAKESIM_SOURCE_DIR
#define WAKESIM_SOURCE_DIR "."
#endif

using namespace wakesim;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(WAKESIM_SOURCE_DIR) / "tests" / "data";

// A private copy of a fake sysfs tree that a test may break; removed afterwards.
class TreeCopy {
public:
    explicit TreeCopy(const std::string& tree) {
        static int counter = 0;
        root_ = fs::temp_directory_path() /
                ("wakesim-sysfs-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
        fs::remove_all(root_);
        fs::copy(kData / tree, root_, fs::copy_options::recursive);
    }
    ~TreeCopy() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    TreeCopy(const TreeCopy&) = delete;
    TreeCopy& operator=(const TreeCopy&) = delete;

    fs::path cpu_dir() const { return root_ / "cpu"; }
    void write(const std::string& rel, const std::string& text) const { std::ofstream(root_ / rel) << text << '\n'; }
    void remove(const std::string& rel) const { fs::remove_all(root_ / rel); }

private:
    fs::path root_;
};

InputError import_error(const fs::path& dir) {
    try {
        import_sysfs(dir.string());
    } catch (const InputError& e) {
        return e;
    }
    FAIL("import of " << dir << " succeeded");
    return InputError("", "", "");
}

CpuSet set_of(std::initializer_list<int> cpus) {
    CpuSet s;
    for (int c : cpus) s.set(c);
    return s;
}

}  // namespace

TEST_CASE("A 2-socket 2-core 2-thread sysfs copy imports with siblings at +4 and a node per socket", "[sysfs]") {
    const Topology t = import_sysfs((kData / "sysfs-2s2c2t" / "cpu").string());
    CHECK(t.name() == "sysfs-2s2c2t");
    REQUIRE(t.nr_cpus() == 8);  // cpu8 is offline
    CHECK_THAT(t.description(), Catch::Contains("offline CPUs ignored: 8"));
    CHECK(t.smt_siblings(1) == set_of({1, 5}));
    CHECK(t.llc_span(0) == set_of({0, 1, 4, 5}));
    CHECK(t.package_span(6) == set_of({2, 3, 6, 7}));
    REQUIRE(t.nr_nodes() == 2);
    CHECK(t.cpu(6).node == 1);
    CHECK(t.node_distance(0, 1) == 21);
    CHECK(t.classify(0, 2) == CpuDistance::cross_numa);
    CHECK_FALSE(t.has_clusters());
    CHECK(t.cpu(3).capacity == 1024);

    const SchedDomains sd = SchedDomains::build(t);
    REQUIRE(sd.of(0).levels.size() == 3);
    CHECK(sd.of(0).levels[2].name == "NUMA");
}

TEST_CASE("An imported sysfs machine round-trips through topology JSON", "[sysfs][json]") {
    for (const char* tree : {"sysfs-2s2c2t", "sysfs-bl-4-4"}) {
        INFO(tree);
        const Topology t = import_sysfs((kData / tree / "cpu").string());
        const nlohmann::json j = t.to_json();
        const Topology back = topology_from_json(JsonNode(j, "imported.json"));
        REQUIRE(back.nr_cpus() == t.nr_cpus());
        for (int c = 0; c < t.nr_cpus(); ++c) {
            CHECK(back.smt_siblings(c) == t.smt_siblings(c));
            CHECK(back.cluster_span(c) == t.cluster_span(c));
            CHECK(back.llc_span(c) == t.llc_span(c));
            CHECK(back.node_span(c) == t.node_span(c));
            CHECK(back.cpu(c).capacity == t.cpu(c).capacity);
        }
    }
    const nlohmann::json two_socket = import_sysfs((kData / "sysfs-2s2c2t" / "cpu").string()).to_json();
    CHECK(two_socket["numbering"] == "siblings_split");
    CHECK(two_socket["packages"] == 2);
}

TEST_CASE("A big.LITTLE sysfs copy gives clusters, cpu_capacity and asym sched domains", "[sysfs]") {
    const Topology t = import_sysfs((kData / "sysfs-bl-4-4" / "cpu").string());
    REQUIRE(t.nr_cpus() == 8);
    CHECK(t.has_clusters());
    CHECK(t.cluster_span(2) == CpuSet::range(0, 3));
    CHECK(t.llc_span(2) == CpuSet::range(0, 7));
    CHECK(t.cpu(0).capacity == 381);
    CHECK(t.cpu(7).capacity == 1024);
    CHECK(t.classify(0, 1) == CpuDistance::cluster);
    CHECK(t.classify(0, 4) == CpuDistance::llc);
    CHECK_FALSE(t.smt_present());

    const SchedDomains sd = SchedDomains::build(t);
    const CpuDomains& d = sd.of(5);
    REQUIRE(d.levels.size() == 2);
    CHECK(d.levels[0].name == "CLS");
    CHECK(d.levels[1].flags & SD_ASYM_CPUCAPACITY_FULL);
    CHECK(d.sd_share_id == 4);
}

TEST_CASE("Without cpuN/nodeK entries the nodes come from ../node/nodeK/cpulist", "[sysfs]") {
    TreeCopy tree("sysfs-2s2c2t");
    for (int c = 0; c < 8; ++c) tree.remove("cpu/cpu" + std::to_string(c) + "/node" + std::to_string((c % 4) / 2));
    tree.write("node/node1/distance", "31 10");
    tree.write("node/node0/distance", "10 31");
    const Topology t = import_sysfs(tree.cpu_dir().string());
    REQUIRE(t.nr_nodes() == 2);
    CHECK(t.node_cpus(1) == set_of({2, 3, 6, 7}));
    CHECK(t.node_distance(1, 0) == 31);
}

TEST_CASE("A CPU in two nodes' cpulists, or an asymmetric distance, is an error naming that node's file", "[sysfs]") {
    TreeCopy tree("sysfs-2s2c2t");
    for (int c = 0; c < 8; ++c) tree.remove("cpu/cpu" + std::to_string(c) + "/node" + std::to_string((c % 4) / 2));
    tree.write("node/node0/distance", "10 21");
    tree.write("node/node1/distance", "21 10");
    tree.write("node/node1/cpulist", "0,2-3,6-7");  // CPU 0 is node0's too
    CHECK_THROWS_WITH(import_sysfs(tree.cpu_dir().string()),
                      Catch::Contains("node1/cpulist: /: expected each CPU in one node; CPU 0 is in node0's cpulist too"));
    tree.write("node/node1/cpulist", "2-3,6-7");
    tree.write("node/node1/distance", "31 10");
    CHECK_THROWS_WITH(import_sysfs(tree.cpu_dir().string()),
                      Catch::Contains("node0/distance: /: expected the distance to node1 (21) to equal node1's to node0 (31)"));
}

TEST_CASE("A CPU whose own online file says 0 is offline, whatever cpu/online says", "[sysfs]") {
    TreeCopy tree("sysfs-bl-4-4");
    tree.write("cpu/online", "0-7");
    tree.write("cpu/cpu2/online", "0");
    tree.remove("cpu/cpu2/topology");
    tree.remove("cpu/cpu2/cache");
    const Topology t = import_sysfs(tree.cpu_dir().string());
    CHECK(t.nr_cpus() == 7);
}

TEST_CASE("An offline CPU in the middle is skipped and the later CPUs are renumbered", "[sysfs]") {
    TreeCopy tree("sysfs-bl-4-4");
    tree.write("cpu/cpu2/online", "0");
    tree.remove("cpu/cpu2/topology");
    tree.remove("cpu/cpu2/cache");
    const Topology t = import_sysfs(tree.cpu_dir().string());
    REQUIRE(t.nr_cpus() == 7);
    CHECK_THAT(t.description(), Catch::Contains("offline CPUs ignored: 2"));
    CHECK(t.cluster_span(0) == CpuSet::range(0, 2));
    CHECK(t.cpu(3).capacity == 1024);  // was cpu4
}

TEST_CASE("cluster_id alone groups CPUs into clusters when cluster_cpus_list is absent", "[sysfs]") {
    TreeCopy tree("sysfs-bl-4-4");
    for (int c = 0; c < 8; ++c) tree.remove("cpu/cpu" + std::to_string(c) + "/topology/cluster_cpus_list");
    const Topology t = import_sysfs(tree.cpu_dir().string());
    CHECK(t.has_clusters());
    CHECK(t.cluster_span(6) == CpuSet::range(4, 7));
}

TEST_CASE("Without cache information the package is the LLC", "[sysfs]") {
    TreeCopy tree("sysfs-2s2c2t");
    for (int c = 0; c < 8; ++c) tree.remove("cpu/cpu" + std::to_string(c) + "/cache");
    const Topology t = import_sysfs(tree.cpu_dir().string());
    CHECK(t.llc_span(0) == t.package_span(0));
}

TEST_CASE("A missing or malformed sysfs file is an InputError naming that file", "[sysfs]") {
    SECTION("missing core_id") {
        TreeCopy tree("sysfs-2s2c2t");
        tree.remove("cpu/cpu3/topology/core_id");
        const InputError e = import_error(tree.cpu_dir());
        CHECK_THAT(e.file(), Catch::EndsWith("cpu3/topology/core_id"));
        CHECK(e.pointer().empty());
        CHECK_THAT(e.expected(), Catch::Contains("core"));
    }
    SECTION("malformed shared_cpu_list") {
        TreeCopy tree("sysfs-2s2c2t");
        tree.write("cpu/cpu1/cache/index3/shared_cpu_list", "0-x");
        const InputError e = import_error(tree.cpu_dir());
        CHECK_THAT(e.file(), Catch::EndsWith("cpu1/cache/index3/shared_cpu_list"));
        CHECK_THAT(e.expected(), Catch::Contains("CPU list"));
    }
    SECTION("sibling lists that disagree") {
        TreeCopy tree("sysfs-2s2c2t");
        tree.write("cpu/cpu5/topology/core_cpus_list", "5-6");
        const InputError e = import_error(tree.cpu_dir());
        CHECK_THAT(e.file(), Catch::Contains("core_cpus_list"));
        CHECK_THAT(e.expected(), Catch::Contains("SMT sibling"));
    }
    SECTION("capacity above 1024") {
        TreeCopy tree("sysfs-bl-4-4");
        tree.write("cpu/cpu6/cpu_capacity", "2048");
        const InputError e = import_error(tree.cpu_dir());
        CHECK_THAT(e.file(), Catch::EndsWith("cpu6/cpu_capacity"));
        CHECK_THAT(e.expected(), Catch::Contains("1..1024"));
    }
    SECTION("no cpuN directories") {
        const InputError e = import_error(kData);
        CHECK_THAT(e.expected(), Catch::Contains("cpu0, cpu1"));
    }
    SECTION("the sysfs root instead of its devices/system/cpu") {
        TreeCopy tree("sysfs-2s2c2t");
        const fs::path sys = tree.cpu_dir().parent_path() / "sys";
        fs::create_directories(sys / "devices" / "system");
        fs::rename(tree.cpu_dir(), sys / "devices" / "system" / "cpu");
        const InputError e = import_error(sys);
        CHECK_THAT(e.expected(), Catch::Contains("they are in " + (sys / "devices" / "system" / "cpu").string()));
    }
    SECTION("not a directory") {
        const InputError e = import_error(kData / "does-not-exist");
        CHECK_THAT(e.expected(), Catch::Contains("directory"));
    }
}

TEST_CASE("sysfs import: special and oversized files are refused", "[topology][sysfs]") {
    {
        TreeCopy t("sysfs-2s2c2t");
        t.remove("cpu/cpu0/topology/core_id");
        const fs::path fifo = t.cpu_dir() / "cpu0" / "topology" / "core_id";
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        const InputError e = import_error(t.cpu_dir());
        CHECK(e.file() == fifo.string());
        CHECK_THAT(e.expected(), Catch::Contains("expected a sysfs attribute file (a regular file), got a FIFO"));
    }
    {
        TreeCopy t("sysfs-2s2c2t");
        const fs::path big = t.cpu_dir() / "cpu0" / "topology" / "core_id";
        fs::resize_file(big, (size_t{1} << 20) + 1);
        const InputError e = import_error(t.cpu_dir());
        CHECK(e.file() == big.string());
        CHECK_THAT(e.expected(), Catch::Contains("of at most 1 MiB"));
    }
    {
        // A value is echoed escaped and cut, on one line.
        TreeCopy t("sysfs-2s2c2t");
        t.write("cpu/cpu0/topology/core_id", "1\n2" + std::string(100, 'x'));
        const InputError e = import_error(t.cpu_dir());
        CHECK_THAT(e.expected(), Catch::Contains("got \"1\\n2xxx"));
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
        CHECK(e.expected().size() < 150);
    }
}

TEST_CASE("An imported machine is named after its DMI product name, never \"system\"", "[sysfs]") {
    const fs::path root = fs::temp_directory_path() / ("wakesim-sysfs-dmi-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "devices" / "system");
    fs::copy(kData / "sysfs-2s2c2t" / "cpu", root / "devices" / "system" / "cpu", fs::copy_options::recursive);
    const std::string cpu_dir = (root / "devices" / "system" / "cpu").string();
    // A copy laid out as /sys is, without DMI tables: "system" says nothing, the name is "imported".
    CHECK(import_sysfs(cpu_dir).name() == "imported");
    fs::create_directories(root / "devices" / "virtual" / "dmi" / "id");
    std::ofstream(root / "devices" / "virtual" / "dmi" / "id" / "product_name") << "To Be Filled By O.E.M.\n";
    CHECK(import_sysfs(cpu_dir).name() == "imported");  // a firmware placeholder is no name
    std::ofstream(root / "devices" / "virtual" / "dmi" / "id" / "product_name") << "PowerEdge R750 (2S)\n";
    CHECK(import_sysfs(cpu_dir).name() == "poweredge-r750-2s");
    fs::remove_all(root);
}

TEST_CASE("sysfs import: cpu1 and cpu01 are refused, not imported as two CPUs", "[topology][sysfs]") {
    TreeCopy t("sysfs-2s2c2t");
    fs::copy(t.cpu_dir() / "cpu1", t.cpu_dir() / "cpu01", fs::copy_options::recursive);
    const InputError e = import_error(t.cpu_dir());
    CHECK_THAT(e.file(), Catch::EndsWith("cpu01"));
    CHECK_THAT(e.expected(), Catch::Contains("without leading zeros (the kernel writes cpu1)"));
}

TEST_CASE("sysfs import: a shared_cpu_list or sibling list without the CPU itself is refused", "[topology][sysfs]") {
    SECTION("LLC list naming only CPUs of another node") {
        // cpu0's LLC list names node 1's CPUs: cut to cpu0's node it would be empty and unchecked.
        TreeCopy t("sysfs-2s2c2t");
        for (int c : {0, 1, 4, 5}) t.write("cpu/cpu" + std::to_string(c) + "/cache/index3/shared_cpu_list", "2-3,6-7");
        const InputError e = import_error(t.cpu_dir());
        CHECK_THAT(e.file(), Catch::EndsWith("cpu0/cache/index3/shared_cpu_list"));
        CHECK_THAT(e.expected(), Catch::Contains("includes cpu0 itself, got \"2-3,6-7\""));
    }
    SECTION("LLC list naming only an offline CPU") {
        TreeCopy t("sysfs-2s2c2t");
        t.write("cpu/cpu1/cache/index3/shared_cpu_list", "8");
        const InputError e = import_error(t.cpu_dir());
        CHECK_THAT(e.file(), Catch::EndsWith("cpu1/cache/index3/shared_cpu_list"));
        CHECK_THAT(e.expected(), Catch::Contains("includes cpu1 itself"));
    }
    SECTION("sibling list") {
        TreeCopy t("sysfs-2s2c2t");
        t.write("cpu/cpu2/topology/core_cpus_list", "6");
        const InputError e = import_error(t.cpu_dir());
        CHECK_THAT(e.file(), Catch::EndsWith("cpu2/topology/core_cpus_list"));
        CHECK_THAT(e.expected(), Catch::Contains("SMT sibling list that includes cpu2 itself"));
    }
}
