// The `extract` kind (an app extracting small files through FUSE: Android shared storage) and the
// energy estimate (energy_mj). What a FUSE developer checks with a trace: each file sends LOOKUP,
// CREATE, its WRITEs, FLUSH and a background RELEASE, and every request ends; the writes per file
// and their sizes are drawn in their ranges from the run's seed; the energy of one CPU busy at a
// fixed OPP is its busy time x that OPP's power; on the phone EAS places every wakeup and, since
// find_energy_efficient_cpu() takes no wake flags, WF_SYNC on the request wake changes nothing.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "hw/hardware.h"
#include "hw/machine_profile.h"
#include "fuse_test_util.h"
#include "sim_test_util.h"
#include "topology/topology.h"
#include "workloads/fuse/fuse_ops.h"
#include "workloads/workloads.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

json extract(const std::string& machine, const std::string& extra, const std::string& policy = "plain",
             int seed = 1) {
    return doc(R"({"name": "x", "description": "d", "machine": ")" + machine +
               R"(", "workload": {"kind": "extract", "files": 300)" + extra + R"(}, "policies": [")" + policy +
               R"("], "run": {"seeds": [)" + std::to_string(seed) + R"(]}, "cases": [{"name": "c"}]})");
}

std::map<std::string, uint64_t> mix(const FuseStats& s) {
    std::map<std::string, uint64_t> m;
    for (size_t i = 0; i < kNrFuseOps; ++i)
        if (s.per_op[i] > 0) m[fuse_op_name(static_cast<FuseOp>(i))] += s.per_op[i];
    return m;
}

}  // namespace

TEST_CASE("extract: each file sends LOOKUP, CREATE, its WRITEs, FLUSH, then RELEASE in the background, and every "
          "request ends", "[extract][fuse]") {
    for (const char* transport : {"dev", "io_uring"}) {
        INFO(transport);
        FuseSim sim(extract("kvm-2vcpu-spr", std::string(R"(, "transport": ")") + transport + "\""));
        sim.run();
        REQUIRE(sim.driver.all_exited());
        CHECK(sim.ctl.ops() == 300);
        const ProgramDriver::DrawStats& d = sim.driver.draws();
        const FuseStats& s = sim.conn().stats();
        using M = std::map<std::string, uint64_t>;
        CHECK(mix(s) == M{{"LOOKUP", 300}, {"CREATE", 300}, {"WRITE", static_cast<uint64_t>(d.count_sum)},
                          {"FLUSH", 300}, {"RELEASE", 300}});
        CHECK(s.bg_sent == 300);  // the RELEASEs: nobody waits for them
        // The file's bytes are what its writes carried.
        CHECK(sim.ctl.bytes() == static_cast<uint64_t>(d.size_sum));
        sim.run(sim.engine.now() + 10 * kNsPerMs);  // the servers take the last RELEASE
        CHECK(sim.conn().stats().sent == sim.conn().stats().completed);
    }
    // The order within a file, as compiled: LOOKUP and CREATE (fuse_atomic_open), the writes in a
    // loop of drawn count, FLUSH, RELEASE.
    const json d = extract("kvm-2vcpu-spr", "");
    const WorkloadBuild b = build_workload(JsonNode(d.at("workload"), "x.json", "/workload"),
                                           make_machine_profile("kvm-2vcpu-spr"), make_topology_preset("kvm-2vcpu-spr"));
    const ProgramTask& app = b.tasks.back();
    REQUIRE(app.spec.comm == "extract");
    std::vector<std::string> seq;
    for (const Op& op : app.code) {
        if (op.kind == Op::fuse_request) seq.emplace_back(fuse_op_name(static_cast<FuseOp>(op.b)));
        if (op.kind == Op::loop_begin && op.b > op.a) seq.emplace_back("loop 1-4");
        if (op.kind == Op::draw) seq.emplace_back("draw 4096-65536");
    }
    CHECK(seq == std::vector<std::string>{"LOOKUP", "CREATE", "loop 1-4", "draw 4096-65536", "WRITE", "FLUSH", "RELEASE"});
}

TEST_CASE("extract: stopped mid-run, every request sent is completed or in flight, at most one synchronous",
          "[extract][fuse][invariant]") {
    FuseSim sim(extract("bl-4-3-1", ""));
    sim.run(3 * kNsPerMs);
    CHECK_FALSE(sim.driver.all_exited());
    const FuseStats& s = sim.conn().stats();
    CHECK(s.sent > 0);
    CHECK(s.sent == s.completed + sim.conn().in_flight());
    CHECK(sim.conn().in_flight() <= 2);  // the app's synchronous request and one RELEASE at most
}

TEST_CASE("extract: writes per file and their sizes are drawn in their ranges, the same for the same seed",
          "[extract][fuse]") {
    const std::string ranges = R"(, "writes_min": 2, "writes_max": 3, "write_size_min": "10KiB", "write_size_max": "12KiB")";
    auto draws = [&](int seed) {
        FuseSim sim(extract("kvm-2vcpu-spr", ranges, "plain", seed));
        sim.run();
        REQUIRE(sim.driver.all_exited());
        return std::pair{sim.driver.draws(), sim.conn().stats().per_op[static_cast<size_t>(FuseOp::write)]};
    };
    const auto [a, writes] = draws(1);
    CHECK(a.counts == 300);
    CHECK(a.count_min == 2);
    CHECK(a.count_max == 3);
    CHECK(a.sizes == static_cast<uint64_t>(a.count_sum));
    CHECK(writes == static_cast<uint64_t>(a.count_sum));
    CHECK(a.size_min >= 10 * 1024);
    CHECK(a.size_max <= 12 * 1024);
    CHECK(a.size_min < a.size_max);  // 300 files draw more than one size
    const auto [again, writes_again] = draws(1);
    CHECK(again.count_sum == a.count_sum);
    CHECK(again.size_sum == a.size_sum);
    CHECK(writes_again == writes);
    const auto [other, writes_other] = draws(2);
    CHECK(other.size_sum != a.size_sum);
    // A fixed range draws its one value.
    FuseSim fixed(extract("kvm-2vcpu-spr", R"(, "writes_min": 2, "writes_max": 2, "write_size_min": "8KiB", "write_size_max": "8KiB")"));
    fixed.run();
    CHECK(fixed.conn().stats().per_op[static_cast<size_t>(FuseOp::write)] == 600);
    CHECK(fixed.ctl.bytes() == 600u * 8192u);
}

TEST_CASE("energy: one CPU busy at a fixed OPP for a known time costs that time x the OPP's power", "[energy][hardware]") {
    for (const char* gov : {"performance", "powersave"}) {
        INFO(gov);
        const Topology topo = make_topology_preset("bl-4-3-1");
        MachineProfile prof = make_machine_profile("bl-4-3-1");
        prof.governor = gov;
        Engine engine;
        Hardware hw(engine, topo, prof);
        hw.start();
        hw.begin_window();
        hw.set_busy(7, true);  // the prime core, 10 ms busy
        engine.run_until(10 * kNsPerMs);
        hw.set_busy(7, false);
        engine.run_until(15 * kNsPerMs);
        const HardwareStats st = hw.window_stats();
        REQUIRE(st.has_energy_model);
        // By hand: performance runs at the top OPP, 2.84 GHz of 2.84, which the prime's energy model
        // delivers with its top state (2841.6 MHz, 968 mV); powersave at 300 MHz, 0.106 of the top,
        // which its lowest state (844.8 MHz, 584 mV) covers. Power = 444 uW/MHz/V^2 x V^2 x MHz,
        // whole MHz as drivers/opp/of.c's _get_dt_power() divides the frequency.
        const double uw = std::string(gov) == "performance" ? 444.0 * 0.968 * 0.968 * 2841 : 444.0 * 0.584 * 0.584 * 844;
        const double want_uj = 0.010 * uw;  // 10 ms x uW
        CHECK(st.energy_uj == Approx(want_uj).epsilon(1e-5));
        CHECK(st.cpu_energy_uj[7] == Approx(want_uj).epsilon(1e-5));
        for (int c = 0; c < 7; ++c) CHECK(st.cpu_energy_uj[static_cast<size_t>(c)] == 0.0);  // idle: no busy energy
    }
    // A machine without an energy model reports none.
    const Topology topo = make_topology_preset("kvm-2vcpu-spr");
    const MachineProfile prof = make_machine_profile("kvm-2vcpu-spr");
    Engine engine;
    Hardware hw(engine, topo, prof);
    hw.begin_window();
    hw.set_busy(0, true);
    engine.run_until(kNsPerMs);
    const HardwareStats st = hw.window_stats();
    CHECK_FALSE(st.has_energy_model);
    CHECK(st.energy_uj == 0.0);
}

TEST_CASE("energy: a run's energy_mj is each CPU's busy time x its OPP's power, 0 without an energy model",
          "[energy][metrics]") {
    // One task pinned to the prime core runs 10 ms under the performance governor.
    auto one_task = [](const std::string& machine) {
        return doc(R"({"machine": {"preset": ")" + machine + R"(", "profile": {"governor": "performance"}},
          "workload": {"kind": "program", "parent_cpu": 7,
            "tasks": [{"name": "t", "cpus": "7", "program": [{"run": "10ms"}]}]},
          "policies": ["plain"]})");
    };
    const Outcome r = simulate(one_task("bl-4-3-1"));
    REQUIRE(r.completed);
    const double busy_ns = r.m.per_cpu(Metric::cpu_util, 7) * static_cast<double>(r.n(Metric::sim_time_ns));
    CHECK(busy_ns > 9.99e6);  // the prime core at the top OPP runs 10 ms of work in 10 ms
    const double top_uw = 444.0 * 0.968 * 0.968 * 2841;
    CHECK(r.m.get(Metric::energy_mj) == Approx(busy_ns * top_uw * 1e-12).epsilon(1e-4));
    CHECK(r.m.per_cpu(Metric::cpu_energy_mj, 7) == Approx(r.m.get(Metric::energy_mj)).epsilon(1e-6));
}

TEST_CASE("phone-fuse-extract: on the phone EAS places every wakeup, so WF_SYNC on the request wake changes "
          "nothing, while on a symmetric guest wake_affine() reads it", "[extract][fuse][eas]") {
    // bl-4-3-1 under schedutil: EAS is on and the root domain never overutilized, so
    // find_energy_efficient_cpu() places every wakeup and never reads the wake flags.
    const Outcome plain = simulate(extract("bl-4-3-1", ""));
    const Outcome sync = simulate(extract("bl-4-3-1", "", "fuse_sync_request"));
    REQUIRE(plain.completed);
    REQUIRE(sync.completed);
    CHECK(plain.n(Metric::select_eas) == plain.n(Metric::wakeups) - plain.n(Metric::wakeups_no_placement));
    CHECK(plain.n(Metric::select_eas) > 1000);
    CHECK(plain.n(Metric::wakeups_affine) == 0);  // wake_affine never ran
    CHECK(sync.n(Metric::sim_time_ns) == plain.n(Metric::sim_time_ns));
    CHECK(sync.n(Metric::migrations) == plain.n(Metric::migrations));
    CHECK(sync.m.get(Metric::energy_mj) == plain.m.get(Metric::energy_mj));
    CHECK(plain.m.get(Metric::energy_mj) > 0);
    // kvm-2vcpu, symmetric and mainline: wake_affine() reads the WF_SYNC hint and picks the app's
    // CPU, but the app is running there, so select_idle_sibling() returns the worker's idle prev
    // (T2): the hint is read, and on this idle 2-vCPU guest it stacks nothing.
    const Outcome smp_plain = simulate(extract("kvm-2vcpu", ""));
    const Outcome smp_sync = simulate(extract("kvm-2vcpu", "", "fuse_sync_request"));
    CHECK(smp_plain.n(Metric::select_eas) == 0);
    CHECK(smp_plain.m.get(Metric::energy_mj) == 0.0);
    // Plain, wake_affine_weight() picks the waker's CPU once in a while (the loads it compares
    // include the full load a new thread starts with).
    CHECK(smp_plain.n(Metric::wakeups_affine) <= 2);
    CHECK(smp_sync.n(Metric::wakeups_affine) > 1000);
    CHECK(smp_sync.n(Metric::select_sis_prev) >= smp_sync.n(Metric::wakeups_affine) - 2);
    CHECK(smp_sync.n(Metric::wakeups_local) == smp_plain.n(Metric::wakeups_local));
}

TEST_CASE("extract: an app thread in a top-app group with a uclamp_min floor runs its own work at a higher clock, "
          "and a group without the app's CPUs is refused", "[extract][uclamp]") {
    // The group's cpu.uclamp.min raises the app thread's clamp (uclamp_tg_restrict()), and
    // schedutil asks for at least it while the app is runnable: the app's share of each file takes
    // less CPU time. The daemon's workers are outside the group and get no floor.
    auto with_group = [](const std::string& groups, const std::string& extra) {
        json d = extract("bl-4-3-1", extra);
        d["groups"] = json::parse(groups);
        return d;
    };
    const Outcome plain = simulate(extract("bl-4-3-1", ""));
    const Outcome boosted =
        simulate(with_group(R"({"top-app": {"cpus": "0-7", "uclamp_min": 512}})", R"(, "group": "top-app")"));
    REQUIRE(plain.completed);
    REQUIRE(boosted.completed);
    CHECK(boosted.n(Metric::cpu_time_requester_ns) < 0.7 * static_cast<double>(plain.n(Metric::cpu_time_requester_ns)));
    // A background group of the littles confines the app there.
    const Outcome little = simulate(with_group(R"({"background": {"cpus": "0-3"}})", R"(, "group": "background")"));
    double on_littles = 0;
    for (const auto& [k, v] : little.m.breakdown(Metric::requester_time_by_capacity))
        if (k == "160") on_littles = v;
    CHECK(on_littles == Approx(1.0));
    // The daemon's workers in a background group of the littles: every request is served there,
    // and the app thread is not confined by it.
    const Outcome bg = simulate(with_group(R"({"background": {"cpus": "0-3"}})", R"(, "daemon_group": "background")"));
    double served_on_littles = 0, app_on_littles = 1;
    for (const auto& [k, v] : bg.m.breakdown(Metric::server_time_by_capacity))
        if (k == "160") served_on_littles = v;
    app_on_littles = 0;
    for (const auto& [k, v] : bg.m.breakdown(Metric::requester_time_by_capacity))
        if (k == "160") app_on_littles = v;
    CHECK(served_on_littles == Approx(1.0));
    CHECK(app_on_littles < 0.5);
    // cpuset: the app's own CPUs and the group's must meet.
    CHECK_THROWS_WITH(simulate(with_group(R"({"background": {"cpus": "0-3"}})", R"(, "cpus": "4-7", "group": "background")")),
                      Catch::Contains("/workload/group"));
}
