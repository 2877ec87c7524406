// Sched domains: levels and flags per sd_init, degeneration, groups, update_top_cache_domain.
#include <catch2/catch.hpp>

#include "input/json_input.h"
#include "topology/sched_domains.h"

using namespace wakesim;

namespace {

Topology machine(const std::string& text) {
    const nlohmann::json j = nlohmann::json::parse(text);
    return topology_from_json(JsonNode(j, "machine.json"));
}

std::vector<std::string> names(const CpuDomains& d) {
    std::vector<std::string> out;
    for (const SchedDomain& sd : d.levels) out.push_back(sd.name);
    return out;
}

using Names = std::vector<std::string>;

constexpr uint32_t kBase = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING;

// The kernel's cpus_share_cache(): same sd_llc_id.
bool cpus_share_cache(const SchedDomains& sd, int a, int b) { return sd.of(a).sd_llc_id == sd.of(b).sd_llc_id; }

}  // namespace

TEST_CASE("A non-SMT single-LLC machine has only an MC domain", "[sched_domains]") {
    const Topology t = make_topology_preset("kvm-2vcpu");
    const SchedDomains sd = SchedDomains::build(t);
    const CpuDomains& d = sd.of(1);
    REQUIRE(names(d) == Names{"MC"});
    const SchedDomain& mc = d.levels[0];
    CHECK(mc.flags == (kBase | SD_SHARE_LLC));
    CHECK(mc.imbalance_pct == 117);
    CHECK(mc.cache_nice_tries == 1);
    CHECK(mc.busy_factor == 16);
    CHECK(mc.min_interval_ms == 2);
    CHECK(mc.max_interval_ms == 4);
    REQUIRE(mc.groups.size() == 2);
    CHECK(mc.groups[0] == CpuSet::single(1));  // the owner's group first
    CHECK(mc.groups[1] == CpuSet::single(0));
    CHECK(d.sd_llc == 0);
    CHECK(d.sd_llc_size == 2);
    CHECK(d.sd_llc_id == 0);
    CHECK(d.sd_share_id == 0);
    CHECK(d.sd_numa == -1);
    CHECK(d.sd_asym_cpucapacity == -1);
    CHECK_FALSE(sd.smt_active());
    CHECK_FALSE(sd.cluster_active());
    CHECK_FALSE(sd.asym_active());
}

TEST_CASE("altra-80 sees the whole package as one 80-CPU MC domain", "[sched_domains]") {
    const SchedDomains sd = SchedDomains::build(make_topology_preset("altra-80"));
    const CpuDomains& d = sd.of(42);
    REQUIRE(names(d) == Names{"MC"});
    CHECK(d.levels[0].span_weight() == 80);
    CHECK(d.levels[0].min_interval_ms == 80);
    CHECK(d.levels[0].max_interval_ms == 160);
    CHECK(d.levels[0].groups.size() == 80);
    CHECK(d.sd_llc_size == 80);
}

TEST_CASE("SMT-2 x 2 LLC x 2 NUMA nodes at distance 21 builds SMT, MC, NUMA levels with WAKE_AFFINE everywhere",
          "[sched_domains]") {
    const Topology t = machine(R"({"packages": 2, "cores_per_cluster": 4, "threads_per_core": 2,
                                   "numbering": "siblings_adjacent", "node_distance": [[10, 21], [21, 10]]})");
    const SchedDomains sd = SchedDomains::build(t);
    CHECK(sd.smt_active());
    for (int cpu = 0; cpu < t.nr_cpus(); ++cpu) {
        INFO("CPU " << cpu);
        const CpuDomains& d = sd.of(cpu);
        REQUIRE(names(d) == Names{"SMT", "MC", "NUMA"});
        for (const SchedDomain& l : d.levels) CHECK((l.flags & SD_WAKE_AFFINE) != 0);
        const SchedDomain& smt = d.levels[0];
        CHECK(smt.flags == (kBase | SD_SHARE_CPUCAPACITY | SD_SHARE_LLC));
        CHECK(smt.imbalance_pct == 110);
        CHECK(smt.cache_nice_tries == 0);
        const SchedDomain& mc = d.levels[1];
        CHECK(mc.flags == (kBase | SD_SHARE_LLC));
        CHECK(mc.span_weight() == 8);
        const SchedDomain& numa = d.levels[2];
        CHECK(numa.flags == (SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_SERIALIZE |
                             SD_NUMA));
        CHECK(numa.cache_nice_tries == 2);
        CHECK(numa.imbalance_pct == 117);
        CHECK(numa.span == t.all());
        CHECK(d.sd_numa == 2);
        CHECK(d.sd_llc == 1);
        CHECK(d.sd_llc_size == 8);
    }
}

TEST_CASE("At distance 32 the NUMA level loses SD_WAKE_AFFINE, SD_BALANCE_FORK and SD_BALANCE_EXEC",
          "[sched_domains]") {
    const Topology t = make_topology_preset("epyc-zen4-2s");
    const SchedDomains sd = SchedDomains::build(t);
    const CpuDomains& d = sd.of(200);
    REQUIRE(names(d) == Names{"SMT", "MC", "PKG", "NUMA"});
    const SchedDomain& numa = d.levels[3];
    CHECK((numa.flags & (SD_WAKE_AFFINE | SD_BALANCE_FORK | SD_BALANCE_EXEC)) == 0);
    CHECK(numa.flags == (SD_BALANCE_NEWIDLE | SD_SERIALIZE | SD_NUMA));
    CHECK((d.levels[2].flags & SD_WAKE_AFFINE) != 0);  // PKG keeps it

    // A larger reclaim distance keeps wake-affine across the sockets.
    const SchedDomains lenient = SchedDomains::build(t, 40);
    CHECK((lenient.of(200).levels[3].flags & SD_WAKE_AFFINE) != 0);
}

TEST_CASE("cpus_share_cache is false across CCXs on epyc-zen4-2s", "[sched_domains]") {
    const SchedDomains sd = SchedDomains::build(make_topology_preset("epyc-zen4-2s"));
    CHECK(cpus_share_cache(sd, 0, 7));
    CHECK(cpus_share_cache(sd, 0, 199));  // SMT sibling of CPU 7
    CHECK_FALSE(cpus_share_cache(sd, 0, 8));
    CHECK_FALSE(cpus_share_cache(sd, 0, 96));
    CHECK(sd.of(199).sd_llc_id == 0);
    CHECK(sd.of(10).sd_llc_id == 8);
    CHECK(sd.of(10).sd_llc_size == 16);
    const CpuDomains& d = sd.of(10);
    CHECK(d.levels[1].groups.size() == 8);   // MC: 8 SMT cores
    CHECK(d.levels[2].groups.size() == 12);  // PKG: 12 CCXs
    CHECK(d.levels[2].span_weight() == 192);
    CHECK(d.levels[3].groups.size() == 2);   // NUMA: 2 sockets
}

TEST_CASE("A single-LLC socket has no PKG level and a non-SMT machine no SMT level", "[sched_domains]") {
    const SchedDomains xeon = SchedDomains::build(make_topology_preset("xeon-2s-16c32t"));
    CHECK(names(xeon.of(0)) == Names{"SMT", "MC", "NUMA"});
    const SchedDomains noht = SchedDomains::build(machine(R"({"packages": 2, "cores_per_cluster": 8})"));
    CHECK(names(noht.of(0)) == Names{"MC", "NUMA"});
    CHECK_FALSE(noht.smt_active());
    const SchedDomains two_llc = SchedDomains::build(machine(R"({"llcs_per_node": 2, "cores_per_cluster": 4})"));
    CHECK(names(two_llc.of(0)) == Names{"MC", "PKG"});
}

TEST_CASE("A parent whose span equals its child's is dropped and passes SD_PREFER_SIBLING down", "[sched_domains]") {
    // Each SMT core is its own LLC: MC equals SMT and disappears; SMT becomes sd_llc.
    const Topology t = machine(R"({"llcs_per_node": 4, "cores_per_cluster": 1, "threads_per_core": 2})");
    const SchedDomains sd = SchedDomains::build(t);
    const CpuDomains& d = sd.of(3);
    REQUIRE(names(d) == Names{"SMT", "PKG"});
    CHECK(d.sd_llc == 0);
    CHECK(d.sd_llc_size == 2);
    CHECK(d.sd_llc_id == 2);
    CHECK((d.levels[0].flags & SD_PREFER_SIBLING) != 0);
}

TEST_CASE("Groups are child-domain spans and the first group holds the owning CPU", "[sched_domains]") {
    const Topology t = make_topology_preset("xeon-2s-16c32t");
    const SchedDomains sd = SchedDomains::build(t);
    const CpuDomains& d = sd.of(19);
    const SchedDomain& smt = d.levels[0];
    REQUIRE(smt.groups.size() == 2);
    CHECK(smt.groups[0] == CpuSet::single(19));
    CHECK(smt.groups[1] == CpuSet::single(3));
    const SchedDomain& mc = d.levels[1];
    REQUIRE(mc.groups.size() == 8);
    CHECK(mc.groups[0] == t.smt_siblings(19));
    CHECK(mc.groups[1] == t.smt_siblings(20));  // the walk goes on from CPU 19 to CPU 20
    const SchedDomain& numa = d.levels[2];
    REQUIRE(numa.groups.size() == 2);
    CHECK(numa.groups[0] == t.node_span(19));
    CHECK(sd.of(9).levels[2].groups[0] == t.node_span(9));
    for (int cpu = 0; cpu < t.nr_cpus(); ++cpu)
        for (const SchedDomain& l : sd.of(cpu).levels) {
            CpuSet all;
            for (const CpuSet& g : l.groups) all |= g;
            CHECK(all == l.span);
            CHECK(l.groups[0].test(cpu));
        }
}

TEST_CASE("big.LITTLE in one LLC puts SD_ASYM_CPUCAPACITY_FULL on MC and drops SD_PREFER_SIBLING below it",
          "[sched_domains]") {
    const Topology t = make_topology_preset("bl-4-3-1");
    const SchedDomains sd = SchedDomains::build(t);
    CHECK(sd.asym_active());
    CHECK(sd.cluster_active());
    CHECK_FALSE(sd.smt_active());
    const CpuDomains& little = sd.of(1);
    REQUIRE(names(little) == Names{"CLS", "MC"});
    CHECK(little.levels[0].flags == (SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE |
                                     SD_CLUSTER | SD_SHARE_LLC));
    CHECK(little.levels[1].flags == (kBase | SD_SHARE_LLC | SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL));
    CHECK(little.sd_asym_cpucapacity == 1);
    CHECK(little.sd_share_id == 0);
    CHECK(little.sd_llc_id == 0);
    CHECK(little.sd_llc_size == 8);
    CHECK(sd.of(5).sd_share_id == 4);
    CHECK(sd.of(5).levels[1].groups.size() == 3);  // the three clusters
    // The prime core is a cluster of one: CLS degenerates and MC is all it has.
    const CpuDomains& prime = sd.of(7);
    REQUIRE(names(prime) == Names{"MC"});
    CHECK(prime.sd_share_id == 0);
    CHECK(prime.sd_asym_cpucapacity == 0);
}

TEST_CASE("A domain holding only some of the capacities gets SD_ASYM_CPUCAPACITY without _FULL", "[sched_domains]") {
    const Topology t = machine(R"({"packages": 2, "cores_per_cluster": 2, "capacities": [1024, 1024, 512, 256]})");
    const SchedDomains sd = SchedDomains::build(t);
    const CpuDomains& d = sd.of(2);
    REQUIRE(names(d) == Names{"MC", "NUMA"});
    CHECK((d.levels[0].flags & SD_ASYM_CPUCAPACITY) != 0);
    CHECK((d.levels[0].flags & SD_ASYM_CPUCAPACITY_FULL) == 0);
    CHECK((d.levels[0].flags & SD_PREFER_SIBLING) == 0);
    CHECK((d.levels[1].flags & SD_ASYM_CPUCAPACITY_FULL) != 0);
    CHECK(d.sd_asym_cpucapacity == 1);
    const CpuDomains& big = sd.of(0);
    CHECK((big.levels[0].flags & SD_ASYM_CPUCAPACITY) == 0);
    CHECK((big.levels[0].flags & SD_PREFER_SIBLING) != 0);
}

TEST_CASE("Clusters smaller than the LLC build a CLS level and set sd_share_id", "[sched_domains]") {
    const Topology t = machine(R"({"clusters_per_llc": 2, "cores_per_cluster": 4})");
    const SchedDomains sd = SchedDomains::build(t);
    CHECK(sd.cluster_active());
    const CpuDomains& d = sd.of(5);
    REQUIRE(names(d) == Names{"CLS", "MC"});
    CHECK(d.levels[0].flags == (kBase | SD_CLUSTER | SD_SHARE_LLC));
    CHECK(d.levels[0].cache_nice_tries == 1);
    CHECK(d.sd_share_id == 4);
    CHECK(d.sd_llc_id == 0);
    CHECK(d.sd_llc == 1);
}

TEST_CASE("Each distinct NUMA distance adds a level, only those beyond 30 lose wake-affine", "[sched_domains]") {
    const Topology t = machine(R"({"packages": 4, "cores_per_cluster": 2, "node_distance":
        [[10, 20, 40, 40], [20, 10, 40, 40], [40, 40, 10, 20], [40, 40, 20, 10]]})");
    const SchedDomains sd = SchedDomains::build(t);
    const CpuDomains& d = sd.of(0);
    REQUIRE(names(d) == Names{"MC", "NUMA1", "NUMA2"});
    CHECK(d.levels[1].span == CpuSet::range(0, 3));
    CHECK((d.levels[1].flags & SD_WAKE_AFFINE) != 0);
    CHECK((d.levels[2].flags & SD_WAKE_AFFINE) == 0);
    CHECK(d.levels[2].groups.size() == 2);
    CHECK(d.sd_numa == 1);
}

TEST_CASE("A single-CPU machine has no sched domains at all", "[sched_domains]") {
    const SchedDomains sd = SchedDomains::build(machine(R"({"name": "up"})"));
    REQUIRE(sd.nr_cpus() == 1);
    CHECK(sd.of(0).levels.empty());
    CHECK(sd.of(0).sd_llc == -1);
    CHECK(sd.of(0).sd_llc_size == 1);
    CHECK(sd.of(0).sd_llc_id == 0);
}

TEST_CASE("sd_flags_to_string names the flags in sd_flags.h order", "[sched_domains]") {
    CHECK(sd_flags_to_string(SD_NUMA | SD_BALANCE_NEWIDLE | SD_SHARE_LLC) ==
          "SD_BALANCE_NEWIDLE|SD_SHARE_LLC|SD_NUMA");
    CHECK(sd_flags_to_string(0).empty());
}

TEST_CASE("describe() folds CPUs of identical shape so 384 CPUs stay readable", "[sched_domains]") {
    const Topology t = make_topology_preset("epyc-zen4-2s");
    const std::string text = SchedDomains::build(t).describe(t);
    CHECK_THAT(text, Catch::Contains("384 CPUs, 1 shape"));
    CHECK_THAT(text, Catch::Contains("CPUs 0-383"));
    CHECK_THAT(text, Catch::Contains("imbalance_pct 110"));
    CHECK_THAT(text, Catch::Contains("interval 384..768 ms"));
    CHECK_THAT(text, Catch::Contains("sd_llc_size 16"));
    CHECK_THAT(text, Catch::Contains("24 LLC instances"));
    CHECK_THAT(text, Catch::Contains("SD_BALANCE_NEWIDLE|SD_SERIALIZE|SD_NUMA"));
    CHECK(std::count(text.begin(), text.end(), '\n') < 40);

    const Topology phone = make_topology_preset("bl-4-3-1");
    const std::string bl = SchedDomains::build(phone).describe(phone);
    CHECK_THAT(bl, Catch::Contains("3 shapes"));  // little, big, prime
    CHECK_THAT(bl, Catch::Contains("asym_active=yes"));
}

TEST_CASE("to_json lists every CPU's levels, spans, groups and derived values", "[sched_domains]") {
    const nlohmann::json j = SchedDomains::build(make_topology_preset("xeon-2s-16c32t")).to_json();
    CHECK(j["smt_active"] == true);
    REQUIRE(j["cpus"].size() == 32);
    const nlohmann::json& c19 = j["cpus"][19];
    CHECK(c19["levels"][0]["name"] == "SMT");
    CHECK(c19["levels"][0]["span"] == "3,19");
    CHECK(c19["levels"][0]["groups"][0] == "19");
    CHECK(c19["levels"][2]["flags"] == "SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|"
                                       "SD_SERIALIZE|SD_NUMA");
    CHECK(c19["sd_llc"] == "MC");
    CHECK(c19["sd_llc_id"] == 0);
    CHECK(c19["sd_numa"] == "NUMA");
    CHECK(c19["sd_asym_cpucapacity"].is_null());
}

TEST_CASE("imb_numa_nr: one task per LLC of a node, or 1/8 of a node that is one LLC", "[sched_domains][numa]") {
    // xeon-2s-16c32t: one LLC per node, so the first level above the LLC (the package, 16 CPUs)
    // allows 16 >> 3 = 2; the NUMA level spans 32 = the lowest NUMA span, so it keeps 2.
    const SchedDomains xeon = SchedDomains::build(make_topology_preset("xeon-2s-16c32t"));
    const CpuDomains& d = xeon.of(0);
    REQUIRE(d.sd_numa >= 0);
    CHECK(d.levels[static_cast<size_t>(d.sd_numa)].imb_numa_nr == 2);
    // epyc-zen4-2s: 12 CCXs per node, so 12 tasks per node before a fork looks at the other node.
    const SchedDomains epyc = SchedDomains::build(make_topology_preset("epyc-zen4-2s"));
    const CpuDomains& e = epyc.of(0);
    REQUIRE(e.sd_numa >= 0);
    CHECK(e.levels[static_cast<size_t>(e.sd_numa)].imb_numa_nr == 12);
}
