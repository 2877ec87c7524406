// Topology facade: presets, numbering schemes, validation, the hierarchy graph and topology JSON.
#include <bit>

#include <catch2/catch.hpp>

#include "input/json_input.h"
#include "topology/topology.h"

using namespace wakesim;

namespace {

Topology from_text(const std::string& text) {
    const nlohmann::json j = nlohmann::json::parse(text);
    return topology_from_json(JsonNode(j, "machine.json"));
}

struct Rejection {
    std::string file, pointer, expected;
};

Rejection rejection(const std::string& text) {
    try {
        from_text(text);
    } catch (const InputError& e) {
        return {e.file(), e.pointer(), e.expected()};
    }
    FAIL("accepted: " << text);
    return {};
}

// Two topologies describe the same machine: same spans, nodes, capacities and distances.
void require_same_machine(const Topology& a, const Topology& b) {
    REQUIRE(a.nr_cpus() == b.nr_cpus());
    REQUIRE(a.nr_nodes() == b.nr_nodes());
    REQUIRE(a.has_clusters() == b.has_clusters());
    for (int c = 0; c < a.nr_cpus(); ++c) {
        INFO("CPU " << c);
        CHECK(a.smt_siblings(c) == b.smt_siblings(c));
        CHECK(a.cluster_span(c) == b.cluster_span(c));
        CHECK(a.llc_span(c) == b.llc_span(c));
        CHECK(a.package_span(c) == b.package_span(c));
        CHECK(a.cpu(c).node == b.cpu(c).node);
        CHECK(a.cpu(c).capacity == b.cpu(c).capacity);
    }
    for (int x = 0; x < a.nr_nodes(); ++x)
        for (int y = 0; y < a.nr_nodes(); ++y) CHECK(a.node_distance(x, y) == b.node_distance(x, y));
}

CpuSet set_of(std::initializer_list<int> cpus) {
    CpuSet s;
    for (int c : cpus) s.set(c);
    return s;
}

}  // namespace

TEST_CASE("Every machine file builds and says which machine it approximates", "[topology]") {
    const std::map<std::string, int> expected = {{"altra-80", 80},   {"xeon-2s-16c32t", 32}, {"e5-2650-2s", 32},
                                                 {"epyc-zen4-2s", 384}, {"bl-4-3-1", 8},      {"kvm-2vcpu", 2},
                                                 {"kvm-2vcpu-spr", 2}, {"sm8250", 8}};
    REQUIRE(machine_names().size() == expected.size());
    for (const auto& name : machine_names()) {
        INFO(name);
        REQUIRE(expected.count(name) == 1);
        const Topology t = make_topology_preset(name);
        CHECK(t.name() == name);
        CHECK(t.description().size() > 40);
        CHECK(t.nr_cpus() == expected.at(name));
    }
    CHECK_THROWS_AS(make_topology_preset("zen4"), std::out_of_range);
    CHECK_THROWS_WITH(make_topology_preset("zen4"), Catch::Contains("epyc-zen4-2s"));
}

TEST_CASE("siblings_split numbering makes CPU 3 and 19 siblings on xeon-2s-16c32t", "[topology]") {
    const Topology t = make_topology_preset("xeon-2s-16c32t");
    CHECK(t.same_core(3, 19));
    CHECK(t.smt_siblings(3) == set_of({3, 19}));
    CHECK(t.classify(3, 19) == CpuDistance::smt);
    CHECK(t.package_span(19) == (CpuSet::range(0, 7) | CpuSet::range(16, 23)));
    CHECK(t.llc_span(3) == t.node_span(3));
    CHECK(t.cpu(19).node == 0);
    CHECK(t.cpu(24).node == 1);
    CHECK(t.classify(3, 5) == CpuDistance::llc);
    CHECK(t.classify(3, 8) == CpuDistance::cross_numa);
    CHECK(t.cpu_distance(3, 8) == 21);
    CHECK(t.smt_present());
    CHECK_FALSE(t.has_clusters());
    CHECK_FALSE(t.asym_capacity());
}

TEST_CASE("epyc-zen4-2s numbers first threads 0-191 and their siblings 192-383, one LLC per CCX", "[topology]") {
    const Topology t = make_topology_preset("epyc-zen4-2s");
    CHECK(t.smt_siblings(5) == set_of({5, 197}));
    CHECK(t.llc_span(0) == (CpuSet::range(0, 7) | CpuSet::range(192, 199)));
    CHECK(t.node_span(0) == (CpuSet::range(0, 95) | CpuSet::range(192, 287)));
    CHECK(t.shares_llc(7, 199));
    CHECK(t.classify(0, 8) == CpuDistance::cross_llc);
    CHECK(t.classify(0, 96) == CpuDistance::cross_numa);
    CHECK(t.node_distance(0, 1) == 32);
    CHECK(t.nr_nodes() == 2);
}

TEST_CASE("classify reports a cluster move only where clusters are smaller than the LLC", "[topology]") {
    const Topology phone = make_topology_preset("bl-4-3-1");
    CHECK(phone.has_clusters());
    CHECK(phone.classify(0, 0) == CpuDistance::same_cpu);
    CHECK(phone.classify(0, 3) == CpuDistance::cluster);
    CHECK(phone.classify(0, 5) == CpuDistance::llc);
    CHECK(phone.classify(4, 7) == CpuDistance::llc);

    const Topology flat = make_topology_preset("altra-80");
    CHECK_FALSE(flat.has_clusters());
    CHECK(flat.classify(0, 1) == CpuDistance::llc);
    CHECK(flat.cluster_span(0) == flat.llc_span(0));
}

TEST_CASE("CPU sets count their CPUs across words, in whole and in ranges", "[topology]") {
    for (const uint64_t w : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}, uint64_t{0x8000000000000001}, uint64_t{0x0123456789abcdef}})
        CHECK(popcount64(w) == std::popcount(w));
    CpuSet s = CpuSet::range(60, 70);  // across the first two words
    s.set(1023);
    CHECK(s.count() == 12);
    CHECK(s.count_range(0, 64) == 4);
    CHECK(s.count_range(64, 1024) == 8);
    CHECK(s.count_range(65, 1023) == 6);
    CHECK(CpuSet::range(0, kMaxCpus - 1).count() == kMaxCpus);
    CHECK(CpuSet{}.count() == 0);
}

TEST_CASE("bl-4-3-1 has little, big and prime capacities in one LLC", "[topology]") {
    const Topology t = make_topology_preset("bl-4-3-1");
    CHECK(t.cpu(0).capacity == 160);
    CHECK(t.cpu(6).capacity == 768);
    CHECK(t.cpu(7).capacity == 1024);
    CHECK(t.asym_capacity());
    CHECK(t.max_capacity() == 1024);
    CHECK(t.llc_span(0) == t.all());
    CHECK(t.cluster_span(5) == CpuSet::range(4, 6));
    CHECK(t.cluster_span(7) == CpuSet::single(7));
}

TEST_CASE("from_cpus rejects inconsistent machines with a message naming the fault", "[topology]") {
    auto cpus = [](int n) {
        std::vector<CpuInfo> v;
        for (int i = 0; i < n; ++i) v.push_back(CpuInfo{i, i, 0, 0, 0, 0, 1024});
        return v;
    };
    const std::vector<std::vector<int>> one = {{10}};
    CHECK_THROWS_WITH(Topology::from_cpus("x", "", {}, one, false), Catch::Contains("at least one CPU"));

    auto gap = cpus(3);
    gap[2].id = 5;
    CHECK_THROWS_WITH(Topology::from_cpus("x", "", gap, one, false), Catch::Contains("missing id 2"));
    auto dup = cpus(3);
    dup[2].id = 1;
    CHECK_THROWS_WITH(Topology::from_cpus("x", "", dup, one, false), Catch::Contains("duplicate id 1"));

    auto weak = cpus(2);
    weak[1].capacity = 0;
    CHECK_THROWS_WITH(Topology::from_cpus("x", "", weak, one, false), Catch::Contains("capacity must be in 1..1024"));

    auto split_core = cpus(2);
    split_core[1].core = 0;
    split_core[1].llc = 1;
    CHECK_THROWS_WITH(Topology::from_cpus("x", "", split_core, one, false),
                      Catch::Contains("core 0 spans LLCs 0 and 1"));

    auto far = cpus(2);
    far[1].node = 1;
    CHECK_THROWS_WITH(Topology::from_cpus("x", "", far, one, false), Catch::Contains("outside the distance matrix"));
    far[1].llc = 1;
    CHECK_THROWS_WITH(Topology::from_cpus("x", "", far, {{10, 21}, {31, 10}}, false), Catch::Contains("symmetric"));
    CHECK_THROWS_WITH(Topology::from_cpus("x", "", far, {{10, 21}, {21, 12}}, false), Catch::Contains("must be 10"));
    CHECK_THROWS_WITH(Topology::from_cpus("x", "", far, {{10, 10}, {10, 10}}, false),
                      Catch::Contains("farther than the local 10"));
    CHECK_NOTHROW(Topology::from_cpus("x", "", far, {{10, 21}, {21, 10}}, false));

    CHECK_THROWS_WITH(Topology::from_cpus("x", "", cpus(kMaxCpus + 1), one, false), Catch::Contains("at most 1024"));
}

TEST_CASE("The hierarchy graph holds package, node, LLC, core and CPU vertices", "[topology]") {
    const Topology t = make_topology_preset("xeon-2s-16c32t");
    // root + 2 packages + 2 nodes + 2 LLCs + 16 cores + 32 CPUs
    CHECK(t.graph_vertices() == 55);
    CHECK(t.hierarchy_path(19) == "pkg0/node0/llc0/core3/cpu19");
    CHECK(t.hierarchy_path(31) == "pkg1/node1/llc1/core15/cpu31");

    const Topology phone = make_topology_preset("bl-4-3-1");
    CHECK(phone.hierarchy_path(5) == "pkg0/node0/llc0/cls1/core5/cpu5");
}

TEST_CASE("A copied topology keeps a working hierarchy after the original is gone", "[topology]") {
    auto original = std::make_unique<Topology>(make_topology_preset("kvm-2vcpu"));
    Topology copy = *original;
    Topology assigned;
    assigned = *original;
    original.reset();
    CHECK(copy.hierarchy_path(1) == "pkg0/node0/llc0/core1/cpu1");
    CHECK(assigned.graph_vertices() == copy.graph_vertices());
    Topology moved = std::move(copy);
    CHECK(moved.nr_cpus() == 2);
}

TEST_CASE("Compact JSON with siblings_adjacent numbering puts a core's threads next to each other",
          "[topology][json]") {
    const Topology t = from_text(R"({"name": "box", "description": "test box", "packages": 2, "llcs_per_node": 2,
        "cores_per_cluster": 4, "threads_per_core": 2, "numbering": "siblings_adjacent"})");
    CHECK(t.name() == "box");
    CHECK(t.nr_cpus() == 32);
    CHECK(t.smt_siblings(6) == set_of({6, 7}));
    CHECK(t.llc_span(0) == CpuSet::range(0, 7));
    CHECK(t.node_span(0) == CpuSet::range(0, 15));
    CHECK(t.classify(0, 9) == CpuDistance::cross_llc);
    CHECK(t.node_distance(0, 1) == 21);  // the documented default
}

TEST_CASE("core_types give big.LITTLE capacities to cores in id order, siblings included", "[topology][json]") {
    const Topology t = from_text(R"({"cores_per_cluster": 4, "threads_per_core": 2, "numbering": "siblings_split",
        "core_types": [{"name": "E", "count": 3, "capacity": 512}, {"count": 1, "capacity": 1024}]})");
    CHECK(t.cpu(0).capacity == 512);
    CHECK(t.cpu(4).capacity == 512);  // sibling of CPU 0
    CHECK(t.cpu(3).capacity == 1024);
    CHECK(t.cpu(7).capacity == 1024);
    CHECK(t.asym_capacity());

    const Topology listed = from_text(R"({"cores_per_cluster": 2, "capacities": [100, 1024]})");
    CHECK(listed.cpu(0).capacity == 100);
}

TEST_CASE("Explicit cpus JSON describes machines the compact form cannot", "[topology][json]") {
    const Topology t = from_text(R"({"name": "odd", "cpus": [
        {"id": 0, "core": 0, "cluster": 0, "llc": 0, "package": 0, "node": 0, "capacity": 300},
        {"id": 1, "core": 1, "cluster": 0, "llc": 0, "package": 0, "node": 0, "capacity": 300},
        {"id": 2, "core": 2, "cluster": 1, "llc": 0, "package": 0, "node": 0},
        {"id": 3, "core": 3, "cluster": 2, "llc": 1, "package": 1, "node": 1}],
        "node_distance": [[10, 40], [40, 10]]})");
    CHECK(t.nr_cpus() == 4);
    CHECK(t.has_clusters());
    CHECK(t.cpu(2).capacity == 1024);
    CHECK(t.classify(0, 1) == CpuDistance::cluster);
    CHECK(t.classify(0, 2) == CpuDistance::llc);
    CHECK(t.cpu_distance(0, 3) == 40);
    CHECK(t.to_json().contains("cpus"));
}

TEST_CASE("to_json writes the compact form when it round-trips, else the explicit list", "[topology][json]") {
    for (const auto& name : machine_names()) {
        INFO(name);
        const Topology t = make_topology_preset(name);
        const nlohmann::json j = t.to_json();
        CHECK(j.contains("cpus") == (name == "bl-4-3-1"));
        const Topology back = topology_from_json(JsonNode(j, name + ".json"));
        CHECK(back.name() == t.name());
        CHECK(back.description() == t.description());
        require_same_machine(t, back);
    }
    const nlohmann::json xeon = make_topology_preset("xeon-2s-16c32t").to_json();
    CHECK(xeon["numbering"] == "siblings_split");
    CHECK_FALSE(xeon.contains("node_distance"));  // 21 is the default
    CHECK(make_topology_preset("epyc-zen4-2s").to_json()["node_distance"][0][1] == 32);

    const Topology bl = from_text(R"({"cores_per_cluster": 8, "core_types": [{"count": 4, "capacity": 381},
        {"count": 4, "capacity": 1024}]})");
    const nlohmann::json j = bl.to_json();
    REQUIRE(j.contains("core_types"));
    CHECK(j["core_types"].size() == 2);
    require_same_machine(bl, topology_from_json(JsonNode(j, "bl.json")));
}

TEST_CASE("An unknown topology key is rejected with the nearest valid name", "[topology][json]") {
    const Rejection r = rejection(R"({"pakages": 2})");
    CHECK(r.file == "machine.json");
    CHECK(r.pointer == "/pakages");
    CHECK_THAT(r.expected, Catch::Contains("\"packages\""));

    const Rejection typo = rejection(R"({"numbering": "siblings_spilt", "threads_per_core": 2})");
    CHECK(typo.pointer == "/numbering");
    CHECK_THAT(typo.expected, Catch::Contains("siblings_split"));

    const Rejection cpu_key = rejection(R"({"cpus": [{"id": 0, "core": 0, "llc": 0, "package": 0, "nod": 0}]})");
    CHECK(cpu_key.pointer == "/cpus/0/nod");
}

TEST_CASE("Bad topology JSON is an InputError pointing at the value", "[topology][json]") {
    struct Case {
        const char* json;
        const char* pointer;
        const char* says;
    };
    const Case cases[] = {
        {R"({"packages": 0})", "/packages", "integer"},
        {R"({"cores_per_cluster": -4})", "/cores_per_cluster", "integer"},
        {R"({"threads_per_core": 9})", "/threads_per_core", "8"},
        {R"({"packages": 64, "cores_per_cluster": 64})", "", "absurd"},
        {R"({"packages": 2, "node_distance": [[10, 9], [9, 10]]})", "/node_distance/0/1", "integer"},
        {R"({"packages": 2, "node_distance": [[10, 21], [31, 10]]})", "/node_distance/1/0", "symmetric"},
        {R"({"packages": 2, "node_distance": [[12, 21], [21, 10]]})", "/node_distance/0/0", "diagonal"},
        {R"({"packages": 2, "node_distance": [[10, 21]]})", "/node_distance", "2 rows"},
        {R"({"cores_per_cluster": 2, "capacities": [1024]})", "/capacities", "one capacity per CPU"},
        {R"({"cores_per_cluster": 2, "capacities": [1024, 0]})", "/capacities/1", "integer"},
        {R"({"cores_per_cluster": 2, "capacities": [1, 2], "core_types": []})", "/core_types", "not both"},
        {R"({"cores_per_cluster": 4, "core_types": [{"count": 3, "capacity": 512}]})", "/core_types", "4 cores"},
        {R"({"core_types": [{"count": 1, "capacity": 512, "size": 3}]})", "/core_types/0/size", "unknown key"},
        {R"({"name": 7})", "/name", "string"},
        {R"([1, 2])", "", "object"},
        {R"({"cpus": []})", "/cpus", "at least one CPU"},
        {R"({"cpus": [{"id": 0, "core": 0, "llc": 0, "package": 0, "node": 0},
                      {"id": 0, "core": 1, "llc": 0, "package": 0, "node": 0}]})", "/cpus/1/id", "repeats"},
        {R"({"cpus": [{"id": 0, "core": 0, "llc": 0, "package": 0, "node": 0},
                      {"id": 1, "core": 0, "llc": 1, "package": 0, "node": 0}]})", "/cpus", "core 0 spans LLCs"},
        {R"({"cpus": [{"id": 0, "core": 0, "llc": 0, "package": 0, "node": 1}]})", "/cpus/0/node", "integer"},
        {R"({"cpus": [{"id": 0, "core": 0, "llc": 0, "package": 0}]})", "/cpus/0", "missing required key \"node\""},
    };
    for (const Case& c : cases) {
        INFO(c.json);
        const Rejection r = rejection(c.json);
        CHECK(r.pointer == c.pointer);
        CHECK_THAT(r.expected, Catch::Contains(c.says));
    }
}
