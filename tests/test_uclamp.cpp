// uclamp (per-task clamps, the runqueue's max aggregation and their effect on util_fits_cpu(),
// find_energy_efficient_cpu(), misfit and schedutil), Android-like task groups (a cpuset and
// cpu.uclamp.min/max) and the eas_sync_bias policy ("NOUPSTREAM: ANDROID: sched: Unconditionally
// honor sync flag for energy-aware wakeups"), on bl-4-3-1 (littles 160, bigs 768, prime 1024)
// and a hand-built two-CPU asymmetric machine.
#include <catch2/catch.hpp>

#include <string>

#include "sim_test_util.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

// test_eas's machine: two littles (capacity 512, CPUs 0-1) and two bigs (1024, CPUs 2-3), one
// cluster, with an energy model in which a little costs less per unit of work at every OPP (on
// bl-4-3-1's model the bigs' cluster, kept at a higher OPP by a busy waker, is often cheaper).
const std::string kAsym4 = R"({"topology": {"name": "asym4", "cores_per_cluster": 4,
                 "core_types": [{"count": 2, "capacity": 512}, {"count": 2, "capacity": 1024}]},
               "profile": {"base": "bl-4-3-1", "governor": "schedutil", "energy_model": [
        {"cpus": "0-1", "opps": [{"freq": "500MHz", "power_uw": 50000}, {"freq": "1GHz", "power_uw": 150000}]},
        {"cpus": "2-3", "opps": [{"freq": "1GHz", "power_uw": 300000}, {"freq": "2GHz", "power_uw": 1000000}]}]}})";

// S (small: `s_run` of work per wakeup) forks from CPU `parent`, runs `s_run`, then sleeps on
// channel `ch`. Z, pinned to `z_cpu`, first wakes it `kWarm` times, 10 ms apart, working 1 ms of
// each 10 (longer where its timer wakes its CPU from a deep state: 500 us on these machines, so W
// waits 12 ms a round): a new task starts at half its CPU's spare capacity (post_init_entity_util_avg()) and
// its util_est keeps that until short activations lower it, so only then is S small. W, pinned to
// `w_cpu`, sleeps through that, runs 5 ms and posts `ch` three times, 5 ms of work apart (work is
// at capacity 1024 and the top OPP: a CPU starting at its lowest OPP takes longer): S's wakeups
// by W (s_wakeups(); a post that finds S still queued, delayed, wakes it in place and is not
// one). `s_keys` adds keys to S, `pre` runs on W before each post, `tasks` adds tasks, `wake` is
// the channel's wake site, `duration` the run's limit.
constexpr int kWarm = 12;
json small_on(const std::string& machine, const std::string& s_run, int parent, int z_cpu, const std::string& s_keys,
              const std::string& policies,
              int w_cpu, const std::string& pre = "", const std::string& tasks = "",
              const std::string& wake = R"({"flags": ["WF_SYNC"], "sync_capable": true})",
              const std::string& duration = "400ms") {
    return doc(R"({"machine": )" + machine + R"(,
      "workload": {"kind": "program", "parent_cpu": )" + std::to_string(parent) + R"(, "channels": {"ch": {"wake": )" + wake + R"(}, "kick": {}},
        "tasks": [)" + tasks + R"(
          {"name": "S")" + s_keys + R"(, "program": [{"run": ")" + s_run + R"("}, {"loop": )" + std::to_string(kWarm + 3) +
               R"(, "do": [{"wait": "ch"}, {"run": ")" + s_run + R"("}]}]},
          {"name": "Z", "cpus": ")" + std::to_string(z_cpu) + R"(", "program": [
             {"loop": )" + std::to_string(kWarm) + R"(, "do": [{"sleep": "9ms"}, {"run": "1ms"}, {"post": "ch"}]}]},
          {"name": "W", "cpus": ")" + std::to_string(w_cpu) + R"(", "program": [{"sleep": ")" + std::to_string(12 * kWarm + 2) + R"(ms"},
             {"run": "5ms"}, {"loop": 3, "do": [)" + pre + R"({"post": "ch"}, {"run": "5ms"}]}]}]},
      "policies": )" + policies + R"(, "run": {"duration": ")" + duration + R"("}})");
}

// S's wakeups by W under `policy`, explained; at least two.
std::vector<Outcome> s_wakeups(const json& d, const std::string& policy = "") {
    std::vector<Outcome> w = wakeups_of(d, "S", "W", policy);
    REQUIRE(w.size() >= 2);
    return w;
}

// On kAsym4, W on big CPU 3.
json small_asym(const std::string& s_keys = "", const std::string& policies = R"(["plain"])", int w_cpu = 3,
                const std::string& pre = "", const std::string& tasks = "",
                const std::string& wake = R"({"flags": ["WF_SYNC"], "sync_capable": true})") {
    return small_on(kAsym4, "1ms", 2, 3, s_keys, policies, w_cpu, pre, tasks, wake);
}

// On bl-4-3-1, W on big CPU 4.
json small_on_phone(const std::string& s_keys = "", const std::string& policies = R"(["plain"])", int w_cpu = 4,
                    const std::string& pre = "", const std::string& tasks = "",
                    const std::string& wake = R"({"flags": ["WF_SYNC"], "sync_capable": true})",
                    const std::string& duration = "400ms") {
    // 50 us: a little CPU at its lowest OPP runs 1024 x 2.84 GHz / (160 x 300 MHz), about 60 times slower.
    return small_on("\"bl-4-3-1\"", "50us", 4, 4, s_keys, policies, w_cpu, pre, tasks, wake, duration);
}

bool little(int cpu) { return cpu >= 0 && cpu <= 1; }  // on kAsym4

}  // namespace

TEST_CASE("uclamp: a uclamp_min above a little CPU's capacity makes a small task skip the littles under EAS",
          "[uclamp][eas]") {
    // Without a clamp, feec packs S on a little CPU (the cheapest energy). With uclamp_min 800,
    // util_fits_cpu() gives -1 on both littles (512 < 800: the util fits, the hint does not) and
    // 1 on the bigs, and feec prefers a CPU that fits fully whatever the energy.
    const Outcome plain = s_wakeups(small_asym()).front();
    REQUIRE(plain.wakee() == "S");
    REQUIRE(plain.outcome() == SelectOutcome::eas);
    CHECK(little(plain.result_cpu()));
    for (const Outcome& r : s_wakeups(small_asym(R"(, "uclamp_min": 800)"))) {
        REQUIRE(r.wakee() == "S");
        const FeecEv* f = r.first<FeecEv>();
        REQUIRE(f);
        CHECK(f->overutilized_cpu == -1);
        CHECK(r.outcome() == SelectOutcome::eas);
        CHECK(r.result_cpu() >= 2);
    }
    // On bl-4-3-1 (bigs 768, prime 1024) a uclamp_min of 900 leaves only the prime fitting fully:
    // every wakeup of S goes there. Unclamped, the energy estimate also sends S to the bigs.
    bool on_big = false;
    for (const Outcome& r : wakeups_of(small_on_phone(), "S", "Z")) on_big |= r.result_cpu() >= 4 && r.result_cpu() <= 6;
    CHECK(on_big);
    const json clamped = small_on_phone(R"(, "uclamp_min": 900)");
    for (const char* waker : {"Z", "W"}) {
        const std::vector<Outcome> ws = wakeups_of(clamped, "S", waker);
        REQUIRE(ws.size() >= 2);
        for (const Outcome& r : ws) {
            CHECK(r.outcome() == SelectOutcome::eas);
            CHECK(r.result_cpu() == 7);
        }
    }
}

TEST_CASE("uclamp: a uclamp_max at or below a small CPU's capacity keeps a busy task there, never misfit",
          "[uclamp][misfit]") {
    // test_balance's misfit case: a hog forks on the small CPU (512) while the big one (1024) is
    // busy; unclamped it becomes misfit and the stopper pushes it to the big CPU once that idles.
    // Capped at 400 it fits the small CPU whatever its utilisation (util_fits_cpu()'s uclamp_max
    // rule), so update_misfit_status() never marks it and nothing pushes it.
    auto scenario = [](const std::string& hog_keys) {
        return doc(R"({"machine": {"topology": {"name": "bl2", "cores_per_cluster": 2, "capacities": [512, 1024]},
                                  "profile": {"base": "kvm-2vcpu"}},
          "workload": {"kind": "program", "tasks": [
            {"name": "blk1", "cpus": "1", "program": [{"run": "2ms"}]},
            {"name": "hog")" + hog_keys + R"(, "program": [{"loop": 100, "do": [{"run": "1ms"}]}]}]},
          "policies": ["plain"]})");
    };
    const Outcome unclamped = simulate(scenario(""));
    REQUIRE(unclamped.completed);
    CHECK(unclamped.n(Metric::migrations_active) == 1);
    const Outcome capped = simulate(scenario(R"(, "uclamp_max": 400)"));
    REQUIRE(capped.completed);
    CHECK(capped.n(Metric::migrations_active) == 0);
    CHECK(capped.n(Metric::migrations) == 0);
    CHECK(capped.util(0) > 0.9);  // the whole run on the small CPU
    CHECK(capped.util(1) < 0.1);
    // A cap above the small CPU's capacity does not make it fit: misfit as before.
    CHECK(simulate(scenario(R"(, "uclamp_max": 600)")).n(Metric::migrations_active) == 1);
}

TEST_CASE("uclamp: a capped busy task on a little CPU does not make the root domain overutilized", "[uclamp][eas]") {
    // B computes 9 ms of every 10 on little CPU 0 (its own cpus 0-3): unclamped its utilisation
    // passes 80% of 160 and the root domain is overutilized, so S's later wakeups take the
    // symmetric path. With B's uclamp_max at 120 (<= 160) cpu_overutilized() is false
    // (util_fits_cpu() with the runqueue's clamps) and EAS keeps deciding.
    const std::string b_unclamped =
        R"({"name": "B", "cpus": "0-3", "program": [{"loop": 40, "do": [{"run": "9ms"}, {"sleep": "1ms"}]}]},)";
    const std::string b_capped =
        R"({"name": "B", "cpus": "0-3", "uclamp_max": 120, "program": [{"loop": 40, "do": [{"run": "9ms"}, {"sleep": "1ms"}]}]},)";
    // W sleeps 200 ms before each post (on the prime, which stays far from overutilized): by its
    // first post B has run long enough. B's work takes far longer than 9 ms on a little CPU: the
    // runs end at the duration limit.
    const std::string pre = R"({"sleep": "200ms"},)";
    const std::string sync = R"({"flags": ["WF_SYNC"], "sync_capable": true})";
    const Outcome over = simulate(small_on_phone("", R"(["plain"])", 7, pre, b_unclamped, sync, "1s"), "", 0);
    const Outcome fine = simulate(small_on_phone("", R"(["plain"])", 7, pre, b_capped, sync, "1s"), "", 0);
    REQUIRE(over.n(Metric::wakeups) > 3);
    REQUIRE(fine.n(Metric::wakeups) > 3);
    // Every placement of S and B, in the capped run, was EAS's (W's wakeups are pinned).
    auto placed = [](const Outcome& o) {
        return o.n(Metric::wakeups) - o.n(Metric::wakeups_no_placement) - o.n(Metric::select_pinned);
    };
    CHECK(fine.n(Metric::select_eas) == placed(fine));
    CHECK(over.n(Metric::select_eas) < placed(over));
}

TEST_CASE("uclamp: schedutil's request is capped by a runqueue's uclamp_max and raised by its uclamp_min",
          "[uclamp][hardware]") {
    // On prime CPU 7 (its own frequency domain). A hog runs it at the top OPP; capped at 300,
    // effective_cpu_util()'s max holds the request at 300/1024 of the top. A task computing 2 ms
    // of every 10 asks for about a quarter of the top; boosted to uclamp_min 1024 it asks for the
    // top while it is runnable.
    auto scenario = [](const std::string& keys, const std::string& body) {
        return doc(R"({"machine": "bl-4-3-1", "workload": {"kind": "program", "tasks": [
            {"name": "t", "cpus": "7")" + keys + R"(, "program": [{"loop": 40, "do": [)" + body + R"(]}]}]},
          "policies": ["plain"]})");
    };
    auto scenario200 = [](const std::string& keys) {
        return doc(R"({"machine": "bl-4-3-1", "workload": {"kind": "program", "tasks": [
            {"name": "t", "cpus": "7")" + keys + R"(, "program": [{"loop": 200, "do": [{"run": "5ms"}]}]}]},
          "policies": ["plain"]})");
    };
    const std::string periodic = R"({"run": "2ms"}, {"sleep": "8ms"})";
    // A second of work: the first tens of ms at low OPPs (schedutil's ramp) barely count.
    const Outcome top = simulate(scenario200(""));
    const Outcome capped = simulate(scenario200(R"(, "uclamp_max": 300)"));
    REQUIRE(top.completed);
    REQUIRE(capped.completed);
    CHECK(capped.m.get(Metric::freq_khz_busy) < 0.5 * top.m.get(Metric::freq_khz_busy));
    const Outcome low = simulate(scenario("", periodic));
    const Outcome boosted = simulate(scenario(R"(, "uclamp_min": 1024)", periodic));
    REQUIRE(low.completed);
    REQUIRE(boosted.completed);
    CHECK(boosted.m.get(Metric::freq_khz_busy) > 1.5 * low.m.get(Metric::freq_khz_busy));
}

TEST_CASE("Task groups: a member's CPUs are its own intersected with the group's cpuset, its clamps restricted",
          "[uclamp][groups]") {
    const Scenario sc = parse_scenario(doc(R"({"machine": "bl-4-3-1",
      "groups": {"top-app": {"uclamp_min": 205}, "background": {"cpus": "0-3", "uclamp_max": 512}},
      "workload": {"kind": "program", "tasks": [
        {"name": "ui", "group": "top-app", "program": [{"run": "1ms"}]},
        {"name": "capped", "group": "top-app", "uclamp_max": 100, "program": [{"run": "1ms"}]},
        {"name": "bg", "group": "background", "cpus": "2-5", "uclamp_min": 600, "program": [{"run": "1ms"}]},
        {"name": "free", "uclamp_min": 50, "program": [{"run": "1ms"}]}],
        "hogs": {"count": 1, "group": "background"}},
      "policies": ["plain"]})"),
                                       "test.json");
    const auto& t = sc.cases.front().workload.tasks;
    REQUIRE(t.size() == 5);
    // top-app: every CPU; uclamp_tg_restrict() clamps the task's 0..1024 into the group's 205..1024.
    CHECK(t[0].spec.allowed.empty());
    CHECK(t[0].spec.uclamp_min == 205);
    CHECK(t[0].spec.uclamp_max == 1024);
    CHECK(t[1].spec.uclamp_min == 205);
    CHECK(t[1].spec.uclamp_max == 205);  // its own 100 is below the group's floor
    // background: cpus 2-5 & 0-3 = 2-3; its uclamp_min 600 capped at the group's 512.
    CHECK(t[2].spec.allowed.count() == 2);
    CHECK(t[2].spec.allowed.test(2));
    CHECK(t[2].spec.allowed.test(3));
    CHECK(t[2].spec.uclamp_min == 512);
    CHECK(t[2].spec.uclamp_max == 512);
    CHECK(t[3].spec.uclamp_min == 50);  // no group: its own
    CHECK(t[3].spec.uclamp_max == 1024);
    CHECK(t[4].spec.comm == "hog-0");
    CHECK(t[4].spec.allowed.count() == 4);
    CHECK(t[4].spec.uclamp_max == 512);
}

TEST_CASE("Task groups: background tasks never run on the big CPUs, even with the littles overloaded",
          "[uclamp][groups][balance]") {
    // Six CPU-bound background tasks on four littles, the bigs idle: the balancer and the wake
    // path would spread them, but the cpuset keeps every one on CPUs 0-3.
    const Outcome r = simulate(doc(R"({"machine": "bl-4-3-1",
      "groups": {"background": {"cpus": "0-3"}, "top-app": {"cpus": "0-7"}},
      "workload": {"kind": "program", "tasks": [
        {"name": "bg", "count": 6, "group": "background", "program": [{"loop": 30, "do": [{"run": "2ms"}, {"sleep": "1ms"}]}]}]},
      "policies": ["plain"]})"));
    REQUIRE(r.completed);
    for (int c = 0; c <= 3; ++c) CHECK(r.util(c) > 0.5);
    for (int c = 4; c <= 7; ++c) CHECK(r.util(c) == 0);
}

TEST_CASE("eas_sync_bias: a WF_SYNC wakee goes to its waker's CPU under EAS, mainline feec ignores WF_SYNC",
          "[policies][eas_sync_bias][eas]") {
    // W runs alone on big CPU 3 and wakes S with WF_SYNC. Mainline feec packs S on a little; the
    // bias returns CPU 3 before any energy estimate.
    const std::string both = R"(["plain", "eas_sync_bias"])";
    const std::vector<Outcome> plains = s_wakeups(small_asym("", both), "plain");
    const std::vector<Outcome> biased = s_wakeups(small_asym("", both), "eas_sync_bias");
    for (const Outcome& plain : plains) {
        REQUIRE(plain.wakee() == "S");
        REQUIRE((plain.flags() & WF_SYNC) != 0);
        CHECK(plain.outcome() == SelectOutcome::eas);
        CHECK(little(plain.result_cpu()));
    }
    for (const Outcome& bias : biased) {
        REQUIRE(bias.wakee() == "S");
        const FeecEv* f = bias.first<FeecEv>();
        REQUIRE(f);
        CHECK(f->result == FeecResult::policy);
        REQUIRE(bias.policy_rule());
        CHECK(bias.policy_rule()->hook == PolicyHook::in_feec);
        CHECK(bias.outcome() == SelectOutcome::eas);
        CHECK(bias.this_cpu() == 3);
        CHECK(bias.result_cpu() == 3);  // W's CPU
    }
}

TEST_CASE("eas_sync_bias: not when the waker's runqueue has another runnable task, the wakee does not fit, or the "
          "wake is not WF_SYNC",
          "[policies][eas_sync_bias][eas]") {
    const std::string bias = R"(["eas_sync_bias"])";
    SECTION("another runnable task on the waker's CPU") {
        // X, pinned to W's CPU, is woken by W just before each post and computes 3 ms: when W
        // posts, CPU 3 runs two tasks.
        const std::string x =
            R"({"name": "X", "cpus": "3", "program": [{"loop": 3, "do": [{"wait": "kick"}, {"run": "3ms"}]}]},)";
        for (const Outcome& r : s_wakeups(small_asym("", bias, 3, R"({"post": "kick"},)", x))) {
            REQUIRE(r.wakee() == "S");
            REQUIRE((r.flags() & WF_SYNC) != 0);
            const FeecEv* f = r.first<FeecEv>();
            REQUIRE(f);
            CHECK(f->overutilized_cpu == -1);  // EAS still decides: feec's own answer
            CHECK(f->result != FeecResult::policy);
            CHECK_FALSE(r.policy_rule());
            CHECK(little(r.result_cpu()));
        }
    }
    SECTION("the wakee does not fit the waker's CPU") {
        // W on little CPU 1 (512); S's uclamp_min 600 fits it only by util (util_fits_cpu() = -1),
        // so task_fits_cpu() is false; feec sends S to a big.
        const Outcome r = s_wakeups(small_asym(R"(, "uclamp_min": 600)", bias, 1)).front();
        REQUIRE(r.wakee() == "S");
        REQUIRE(r.this_cpu() == 1);
        const FeecEv* f = r.first<FeecEv>();
        REQUIRE(f);
        CHECK(f->result != FeecResult::policy);
        CHECK(r.result_cpu() >= 2);
        // Unclamped, S fits the little waker's CPU: the bias applies there too.
        const Outcome fits = s_wakeups(small_asym("", bias, 1)).front();
        REQUIRE(fits.first<FeecEv>());
        CHECK(fits.first<FeecEv>()->result == FeecResult::policy);
        CHECK(fits.result_cpu() == 1);
    }
    SECTION("the wakee is not allowed on the waker's CPU") {
        const Outcome r = s_wakeups(small_asym(R"(, "cpus": "0-2")", bias)).front();
        REQUIRE(r.wakee() == "S");
        REQUIRE(r.first<FeecEv>());
        CHECK(r.first<FeecEv>()->result != FeecResult::policy);
        CHECK(r.result_cpu() != 3);
    }
    SECTION("a plain wake_up") {
        const Outcome r = s_wakeups(small_asym("", bias, 3, "", "", "{}")).front();
        REQUIRE(r.wakee() == "S");
        CHECK((r.flags() & WF_SYNC) == 0);
        CHECK_FALSE(r.policy_rule());
        CHECK(little(r.result_cpu()));
    }
}

TEST_CASE("eas_sync_bias: without EAS (no energy model) it never fires", "[policies][eas_sync_bias]") {
    const Outcome r = simulate(doc(R"({"machine": "altra-80", "workload": {"kind": "pipe", "loops": 2000},
                                      "policies": ["eas_sync_bias", "plain"]})"));
    const Outcome p = simulate(doc(R"({"machine": "altra-80", "workload": {"kind": "pipe", "loops": 2000},
                                      "policies": ["eas_sync_bias", "plain"]})"),
                               "plain");
    CHECK(r.m.get(Metric::usec_per_op) == p.m.get(Metric::usec_per_op));
    CHECK(r.n(Metric::migrations) == p.n(Metric::migrations));
}

TEST_CASE("eas_sync_bias composed with fuse_sync_request: the /dev/fuse request wake carries WF_SYNC and the worker "
          "wakes on the requester's CPU",
          "[policies][eas_sync_bias][fuse]") {
    // fio psync reads over /dev/fuse on the phone. Mainline's request wake is a plain wake_up, so
    // the bias alone never fires there; fuse_sync_request adds WF_SYNC to it, and composed with
    // the bias the worker is woken where fio runs (a local wakeup, no IPI) while EAS decides.
    const json d = doc(R"({"machine": "bl-4-3-1", "workload": {"kind": "fio", "number_ios": 2000},
      "policies": ["plain", "eas_sync_bias", "fuse_sync_request",
                   {"name": "sync+bias", "compose": ["fuse_sync_request", "eas_sync_bias"]}]})");
    const Outcome plain = simulate(d, "plain");
    const Outcome bias = simulate(d, "eas_sync_bias");
    const Outcome sync = simulate(d, "fuse_sync_request");
    const Outcome both = simulate(d, "sync+bias");
    for (const Outcome* o : {&plain, &bias, &sync, &both}) REQUIRE(o->completed);
    CHECK(bias.m.get(Metric::usec_per_op) == plain.m.get(Metric::usec_per_op));
    CHECK(bias.n(Metric::wakeups_local) == plain.n(Metric::wakeups_local));
    CHECK(both.n(Metric::wakeups_local) > sync.n(Metric::wakeups_local) + 1000);
}
