// Per-policy clocks (hw/hardware.cpp, hw/machine_profile.cpp): each cpufreq policy has its own OPP
// table and its own schedutil state (next_freq, rate limit; iowait boost per CPU), frequency
// invariance scales by the CPU's own policy's max frequency, and capacities come from
// capacity-dmips-mhz x the policy's max frequency as topology_normalize_cpu_scale()
// (drivers/base/arch_topology.c) derives them. References: kernel/sched/cpufreq_schedutil.c
// (sugov_update_shared, get_next_freq, sugov_iowait_boost), the sm8250 preset (machines/sm8250.json).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "hw/hardware.h"
#include "hw/machine_profile.h"
#include "cli_test_util.h"
#include "fuse_test_util.h"
#include "sim_test_util.h"
#include "topology/sched_domains.h"
#include "topology/topology.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

class FakeClient final : public HardwareClient {
public:
    explicit FakeClient(int n) : util(static_cast<size_t>(n), 0.0) {}
    double cpu_util(int cpu) const override { return util[static_cast<size_t>(cpu)]; }
    Time cpu_busy_ns(int) const override { return 0; }
    void speed_changed(int cpu) override { changed.push_back(cpu); }
    std::vector<double> util;
    std::vector<int> changed;
};

MachineProfile::CpufreqPolicy policy(const std::string& cpus, std::vector<int> ids, std::vector<int64_t> opp, int64_t dmips) {
    MachineProfile::CpufreqPolicy p;
    p.cpus = cpus;
    p.cpu_ids = std::move(ids);
    p.opp_khz = std::move(opp);
    p.capacity_dmips_mhz = dmips;
    return p;
}

constexpr int64_t kLittleMax = 1500000, kBigMax = 2400000;

// Two littles (CPUs 0-1, 512 DMIPS/MHz, 0.5-1.5 GHz) and two bigs (CPUs 2-3, 1024 DMIPS/MHz,
// 0.8-2.4 GHz) in one cluster, a policy each, schedutil with immediate transitions and a 1 ms
// rate limit.
MachineProfile asym_profile() {
    MachineProfile p = make_machine_profile("bl-4-3-1");
    p.energy_model.clear();
    p.opp_khz.clear();
    p.cpufreq_policies = {policy("0-1", {0, 1}, {500000, 1000000, kLittleMax}, 512),
                          policy("2-3", {2, 3}, {800000, 1600000, kBigMax}, 1024)};
    p.governor = "schedutil";
    p.freq_transition_ns = 0;
    p.sugov_rate_limit_ns = kNsPerMs;
    return p;
}

Topology asym_topology(const MachineProfile& p) {
    std::vector<CpuInfo> cpus;
    for (int c = 0; c < 4; ++c) {
        CpuInfo i;
        i.id = c;
        i.core = c;
        cpus.push_back(i);
    }
    return with_policy_capacities(Topology::from_cpus("asym4", "two littles, two bigs", cpus, {}, false), p);
}

struct Rig {
    MachineProfile prof = asym_profile();
    Topology topo = asym_topology(prof);
    Engine engine;
    FakeClient client{4};
    Hardware hw{engine, topo, prof};
    Rig() {
        hw.set_client(&client);
        hw.start();
        engine.run_until(kNsPerMs);  // away from t = 0
    }
    void set_util(int cpu, double frac) {
        client.util[static_cast<size_t>(cpu)] = frac * topo.cpu(cpu).capacity;
        hw.util_changed(cpu);
    }
    void advance(Time dt) { engine.run_until(engine.now() + dt); }
};

}  // namespace

TEST_CASE("clocks: capacity is capacity-dmips-mhz x the policy's max frequency, the biggest scaled to 1024",
          "[clocks]") {
    const MachineProfile p = asym_profile();
    // little: 512 x 1.5 GHz over 1024 x 2.4 GHz = 0.3125 of the big.
    CHECK(policy_capacities(p, 4) == std::vector<int>{320, 320, 1024, 1024});
    const Topology t = asym_topology(p);
    CHECK(t.cpu(0).capacity == 320);
    CHECK(t.cpu(3).capacity == 1024);
    CHECK(t.asym_capacity());

    // The sm8250.dtsi numbers: V. Guittot's "arm64: dts: qcom: sm8250: correct dynamic power
    // coefficients" reports max capacity 284 for CPU0 and 871 for CPU4 on an RB5 (rounded down).
    MachineProfile sm = p;
    sm.cpufreq_policies = {policy("0-3", {0, 1, 2, 3}, {300000, 1804800}, 448),
                           policy("4-6", {4, 5, 6}, {710400, 2419200}, 1024), policy("7", {7}, {844800, 2841600}, 1024)};
    CHECK(policy_capacities(sm, 8) == std::vector<int>{284, 284, 284, 284, 871, 871, 871, 1024});

    // Without capacity-dmips-mhz the topology's capacities stay.
    MachineProfile given = p;
    for (auto& pol : given.cpufreq_policies) pol.capacity_dmips_mhz = 0;
    CHECK(policy_capacities(given, 4).empty());
    const Topology flat = Topology::from_cpus("f", "d", t.cpus(), {}, false);
    CHECK(with_policy_capacities(flat, given).cpu(0).capacity == 320);
}

TEST_CASE("clocks: under schedutil a busy big runs at its top OPP while an idle-ish little sits at its lowest",
          "[clocks][hardware]") {
    Rig r;
    REQUIRE(r.hw.governor() == "schedutil");
    CHECK(r.hw.policy_of(0) == r.hw.policy_of(1));
    CHECK(r.hw.policy_of(0) != r.hw.policy_of(2));
    CHECK(r.hw.max_khz(0) == kLittleMax);
    CHECK(r.hw.max_khz(2) == kBigMax);
    r.set_util(2, 0.95);  // busy big
    r.set_util(0, 0.05);  // idle-ish little
    // At the same instant each policy runs its own OPP: 1.25 x 0.95 > 1 maps to the big's
    // 2.4 GHz; 1.25 x 0.05 x 1.5 GHz = 94 MHz maps to the little's lowest OPP.
    CHECK(r.hw.freq_khz(2) == kBigMax);
    CHECK(r.hw.freq_khz(3) == kBigMax);  // the policy's CPUs share its clock
    CHECK(r.hw.freq_khz(0) == 500000);
    CHECK(r.hw.freq_khz(1) == 500000);
    // Half busy: 1.25 x 0.5 x the policy's own max, rounded up to the policy's own OPPs.
    r.advance(2 * kNsPerMs);
    r.set_util(2, 0.5);  // 1.5 GHz -> 1.6 GHz on the big table
    r.set_util(0, 0.5);  // 937.5 MHz -> 1 GHz on the little table
    CHECK(r.hw.freq_khz(2) == 1600000);
    CHECK(r.hw.freq_khz(0) == 1000000);
}

TEST_CASE("clocks: frequency invariance scales each CPU by its own policy's cur/max frequency", "[clocks][hardware]") {
    Rig r;
    // Both policies start at their lowest OPP (an idle machine).
    CHECK(r.hw.invariant_speed(0) == Approx(320.0 / 1024.0 * 500000.0 / 1500000.0));
    CHECK(r.hw.invariant_speed(2) == Approx(800000.0 / 2400000.0));
    r.set_util(0, 0.5);  // little policy to 1 GHz of 1.5
    CHECK(r.hw.invariant_speed(0) == Approx(320.0 / 1024.0 * 1000000.0 / 1500000.0));
    CHECK(r.hw.invariant_speed(1) == Approx(r.hw.invariant_speed(0)));
    // Only the little policy's CPUs were rescaled; the big one's still run at 0.8 of 2.4 GHz.
    for (int c : r.client.changed) CHECK(c <= 1);
    CHECK(!r.client.changed.empty());
    CHECK(r.hw.invariant_speed(2) == Approx(800000.0 / 2400000.0));
    r.set_util(2, 0.9);  // big policy to 2.4 of 2.4
    CHECK(r.hw.invariant_speed(2) == Approx(1.0));
    CHECK(r.hw.invariant_speed(3) == Approx(1.0));
    // PELT's integer scale follows: 320 x 1/1.5 = 213.3 on the little CPUs, 1024 on the big.
    CHECK(r.hw.invariant_scale(0) == 213);
    CHECK(r.hw.invariant_scale(1) == 213);
    CHECK(r.hw.invariant_scale(2) == 1024);
}

TEST_CASE("clocks: each policy has its own rate limit and each CPU its own iowait boost", "[clocks][hardware]") {
    Rig r;
    r.set_util(0, 0.5);  // little changes at t: its rate-limit window starts
    REQUIRE(r.hw.freq_khz(0) == 1000000);
    r.advance(100 * kNsPerUs);
    r.set_util(2, 0.5);  // the big policy is not held by the little's window
    CHECK(r.hw.freq_khz(2) == 1600000);
    r.set_util(0, 0.95);  // the little's own window holds it
    CHECK(r.hw.freq_khz(0) == 1000000);
    r.advance(kNsPerMs);
    r.hw.util_changed(0);
    CHECK(r.hw.freq_khz(0) == kLittleMax);

    // sugov_iowait_boost(): boosts on CPU 3 raise CPU 3's policy only (128, 256, 512, 1024).
    r.advance(2 * kNsPerMs);
    r.set_util(2, 0.1);
    r.set_util(3, 0.0);
    r.set_util(0, 0.1);
    const int64_t little_before = r.hw.freq_khz(0);
    REQUIRE(r.hw.freq_khz(2) == 800000);
    for (int i = 0; i < 4; ++i) {
        r.advance(2 * kNsPerMs);
        r.hw.iowait_boost(3);
    }
    CHECK(r.hw.iowait_boost_value(3) == 1024);
    CHECK(r.hw.iowait_boost_value(2) == 0);
    CHECK(r.hw.freq_khz(2) == kBigMax);
    CHECK(r.hw.freq_khz(0) == little_before);
}

TEST_CASE("clocks: the sm8250 preset has three policies on the device tree's OPPs and one cache level", "[clocks][machines]") {
    const MachineFile m = load_machine_file(machine_path("sm8250"));
    REQUIRE(m.profile.cpufreq_policies.size() == 3);
    CHECK(m.profile.opp_khz.empty());
    const std::vector<int> caps = {284, 284, 284, 284, 871, 871, 871, 1024};
    for (int c = 0; c < 8; ++c) CHECK(m.topo.cpu(c).capacity == caps[static_cast<size_t>(c)]);
    CHECK(m.profile.cpufreq_policies[0].opp_khz.size() == 17);
    CHECK(m.profile.cpufreq_policies[1].opp_khz.size() == 18);
    CHECK(m.profile.cpufreq_policies[2].opp_khz.back() == 2841600);
    // DynamIQ: one cpu-map cluster, one L3: every CPU shares its cache with every other.
    for (int c = 1; c < 8; ++c) CHECK(m.topo.shares_llc(0, c));
    CHECK_FALSE(m.topo.has_clusters());
    const SchedDomains sd = SchedDomains::build(m.topo, 30);
    CHECK(sd.asym_active());
    CHECK(sd.of(0).levels.size() == 1);
    // The energy model is over the policies' own OPPs.
    CHECK(cpufreq_policy_mismatch(m.profile, m.topo).empty());
    CHECK(energy_model_mismatch(m.profile, m.topo).empty());
    for (size_t i = 0; i < 3; ++i) CHECK(m.profile.energy_model[i].opps.back().khz == m.profile.cpufreq_policies[i].opp_khz.back());
    // schedutil starts each policy at its own lowest OPP (a machine idle since boot).
    Engine e;
    Hardware hw(e, m.topo, m.profile);
    CHECK(hw.freq_khz(0) == 300000);
    CHECK(hw.freq_khz(4) == 710400);
    CHECK(hw.freq_khz(7) == 844800);
    CHECK(hw.max_khz(0) == 1804800);
    CHECK(hw.max_khz(4) == 2419200);
    CHECK(hw.max_khz(7) == 2841600);
    CHECK(hw.invariant_speed(0) == Approx(284.0 / 1024.0 * 300000.0 / 1804800.0));
}

// A hog's utilisation, frequency invariant, climbs 1.25x per OPP step schedutil grants, so the
// prime reaches its top after a few hundred ms: the window starts after 1 s.
TEST_CASE("clocks: a small scenario on sm8250 runs the prime at its top while a mostly idle little runs low",
          "[clocks][machines]") {
    const Outcome r = simulate(doc(R"({"machine": "sm8250",
      "workload": {"kind": "program",
        "tasks": [{"name": "hog", "cpus": "7", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
                  {"name": "tick", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "50us"}, {"sleep": "10ms"}]}]}]},
      "policies": ["plain"], "run": {"warmup": "1s", "duration": "1200ms"}})"));
    CHECK(r.m.per_cpu(Metric::cpu_freq_khz, 7) == Approx(2841600).epsilon(0.01));
    CHECK(r.m.per_cpu(Metric::cpu_freq_khz, 0) < 700000);
    // The little's 300 MHz and the prime's 2.8416 GHz are both in the residency table.
    std::vector<std::string> seen;
    for (const auto& [khz, frac] : r.m.breakdown(Metric::freq_residency))
        if (frac > 0) seen.push_back(khz);
    CHECK(std::find(seen.begin(), seen.end(), "2841600") != seen.end());
    CHECK(std::find(seen.begin(), seen.end(), "300000") != seen.end());
}

TEST_CASE("clocks: schedutil acts on a CPU's update only when it is made on a CPU of the policy, unless the "
          "driver takes requests from any CPU (dvfs_possible_from_any_cpu)",
          "[clocks][hardware]") {
    // sugov_should_update_freq(): cpufreq_this_cpu_can_update(). acpi-cpufreq and intel_cpufreq
    // leave the flag clear: a wakeup that enqueues on a big CPU from a little one, or a little
    // CPU's blocked-load update of an idle big one, leaves the big policy's clock to its own CPUs.
    for (const bool any : {false, true}) {
        INFO("dvfs_from_any_cpu " << any);
        Rig r;
        r.prof.dvfs_from_any_cpu = any;  // Hardware reads the profile it was given
        r.set_util(2, 0.1);
        r.set_util(3, 0.0);
        REQUIRE(r.hw.freq_khz(2) == 800000);
        r.advance(2 * kNsPerMs);
        r.client.util[2] = 0.95 * r.topo.cpu(2).capacity;
        r.hw.util_changed(2, false, 0);  // made on little CPU 0
        CHECK(r.hw.freq_khz(2) == (any ? kBigMax : 800000));
        r.hw.util_changed(2, false, 3);  // made on big CPU 3: the same policy
        CHECK(r.hw.freq_khz(2) == kBigMax);
    }
    // Each CPU its own policy (cpufreq_per_cpu, hardware coordination): only the CPU itself.
    Rig r;
    r.prof.dvfs_from_any_cpu = false;
    r.prof.cpufreq_per_cpu = true;
    r.set_util(2, 0.1);
    r.set_util(3, 0.0);
    r.advance(2 * kNsPerMs);
    r.set_util(3, 0.0);
    REQUIRE(r.hw.freq_khz(2) == 800000);
    r.client.util[2] = 0.95 * r.topo.cpu(2).capacity;
    r.hw.util_changed(2, false, 3);  // its SMT sibling or core neighbour: refused
    CHECK(r.hw.freq_khz(2) == 800000);
    r.hw.util_changed(2, false, 2);
    CHECK(r.hw.freq_khz(2) == kBigMax);
}

TEST_CASE("schedutil holds a CPU's clock while its idle periods are too short to stop the tick, so table A's /dev/fuse run keeps the clocks of its first 32 ms",
          "[clocks][fuse]") {
    // fio over /dev/fuse on xeon-2s-16c32t (a policy per CPU): fio and the two workers idle about
    // 30 us at a time. After menu's first 14 ms it keeps the tick at every idle entry, so
    // tick_nohz_get_idle_calls_cpu() stops moving and sugov_hold_freq() refuses every lower
    // request: the clocks reached by then stay. Which clocks those are depends on the seed (1.6 GHz
    // on CPU 2 in seed 5, 2.0 in seed 3, from the lowest OPP at the start): the two regimes of
    // table A's A1 (docs/validation.md).
    nlohmann::json d = nlohmann::json::parse(clitest::read_file(clitest::kSource / "scenarios" / "validation" / "table-a-fuse-fio-xeon.json"));
    d.erase("validation");
    d["cases"] = nlohmann::json::array({d["cases"][0]});
    d["policies"] = {"plain"};
    d["workload"]["number_ios"] = 40000;
    std::map<int, int64_t> cpu2;
    for (int seed : {5, 3}) {
        INFO("seed " << seed);
        d["run"]["seeds"] = {seed};
        testutil::FuseSim sim(d);
        sim.engine.run_until(40 * kNsPerMs);
        const std::vector<int64_t> held = {sim.hw().freq_khz(0), sim.hw().freq_khz(1), sim.hw().freq_khz(2)};
        for (Time t = 41 * kNsPerMs; t <= 1000 * kNsPerMs; t += kNsPerMs) {
            sim.engine.run_until(t);
            for (int c = 0; c < 3; ++c) REQUIRE(sim.hw().freq_khz(c) == held[static_cast<size_t>(c)]);
        }
        cpu2[seed] = held[2];
    }
    CHECK(cpu2[5] == 1'600'000);
    CHECK(cpu2[3] == 2'000'000);
}
