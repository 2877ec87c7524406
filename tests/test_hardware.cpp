// The hardware model (sim/hardware.h) one mechanism at a time: cpufreq governors (schedutil,
// performance, powersave, ondemand, conservative), the cpuidle governor (menu, teo), cache warmth
// of working sets and shared data, SMT contention. The Hardware object is driven directly through
// a fake HardwareClient whose utilisation and busy time the test sets; one end-to-end check runs
// the request/reply scenario through the simulator. References: kernel/sched/cpufreq_schedutil.c,
// drivers/cpufreq/cpufreq_ondemand.c and cpufreq_conservative.c, drivers/cpuidle/governors/menu.c.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "hw/hardware.h"
#include "hw/machine_profile.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/simulation.h"
#include "hw/cache_warmth.h"
#include "topology/topology.h"

#ifndef WAKESIM_SOURCE_DIR
#define WAKESIM_SOURCE_DIR "."
#endif

using namespace wakesim;

namespace {

// What the scheduler would tell the hardware, set by hand.
class FakeClient final : public HardwareClient {
public:
    explicit FakeClient(int n) : util(static_cast<size_t>(n), 0.0), busy(static_cast<size_t>(n), 0) {}
    double cpu_util(int cpu) const override { return util[static_cast<size_t>(cpu)]; }
    Time cpu_busy_ns(int cpu) const override { return busy[static_cast<size_t>(cpu)]; }
    void speed_changed(int cpu) override { changed.push_back(cpu); }

    std::vector<double> util;  // PELT util_avg, 0..capacity
    std::vector<Time> busy;    // cumulative non-idle ns
    std::vector<int> changed;  // every speed_changed() call, in order
};

MachineProfile profile_for(const std::string& machine, const std::function<void(MachineProfile&)>& edit) {
    MachineProfile p = make_machine_profile(machine);
    if (edit) edit(p);
    return p;
}

// One machine's hardware with a fake scheduler above it.
struct Rig {
    Topology topo;
    MachineProfile prof;
    Engine engine;
    FakeClient client;
    Hardware hw;

    explicit Rig(const std::string& machine, const std::function<void(MachineProfile&)>& edit = {})
        : topo(make_topology_preset(machine)),
          prof(profile_for(machine, edit)),
          client(topo.nr_cpus()),
          hw(engine, topo, prof) {
        hw.set_client(&client);
        hw.start();
    }
    void set_util(int cpu, double frac_of_capacity) {
        client.util[static_cast<size_t>(cpu)] = frac_of_capacity * topo.cpu(cpu).capacity;
    }
    void advance(Time dt) { engine.run_until(engine.now() + dt); }
    void advance_to(Time t) { engine.run_until(t); }
    std::set<int> changed_set() const { return {client.changed.begin(), client.changed.end()}; }
};

std::function<void(MachineProfile&)> governor(const std::string& g) {
    return [g](MachineProfile& p) { p.governor = g; };
}

// The tests of one mechanism (the governors, SMT contention) on e5-2650-2s leave its Turbo
// Boost out: at P0 its clock depends on the cores in C0 (the turbo tests below).
std::function<void(MachineProfile&)> no_turbo(const std::function<void(MachineProfile&)>& edit = {}) {
    return [edit](MachineProfile& p) {
        p.turbo_khz.clear();
        if (edit) edit(p);
    };
}

int64_t lowest_opp_at_least(const MachineProfile& p, double khz) {
    for (int64_t f : p.opp_khz)
        if (static_cast<double>(f) >= khz) return f;
    return p.opp_khz.back();
}
int64_t highest_opp_at_most(const MachineProfile& p, double khz) {
    int64_t pick = p.opp_khz.front();
    for (int64_t f : p.opp_khz)
        if (static_cast<double>(f) <= khz) pick = f;
    return pick;
}

int state_index(const Hardware& hw, const std::string& name) {
    const auto& st = hw.idle_states();
    for (size_t i = 0; i < st.size(); ++i)
        if (st[i].name == name) return static_cast<int>(i);
    return -1;
}
std::string state_name(const Hardware& hw, int cpu) {
    const int s = hw.idle_state(cpu);
    return s < 0 ? std::string("(running)") : hw.idle_states()[static_cast<size_t>(s)].name;
}

// Leaves the boot-time idle, then goes through idle periods of the given lengths (each followed by
// 1 us of running), and enters idle once more: the state the governor picks for that entry.
void idle_history(Rig& r, int cpu, const std::vector<Time>& lengths) {
    r.hw.idle_exit(cpu);
    for (Time len : lengths) {
        r.advance(kNsPerUs);
        r.hw.idle_enter(cpu);
        r.advance(len);
        r.hw.idle_exit(cpu);
    }
    r.advance(kNsPerUs);
    r.hw.idle_enter(cpu);
}

constexpr int64_t kFmin = 1200000, kFmax = 2600000;  // E5-2650 v2
constexpr Time kStart = kNsPerMs;                    // tests start away from t = 0

}  // namespace

// ---------------------------------------------------------------------------------------------
// 1. schedutil (kernel/sched/cpufreq_schedutil.c)
// ---------------------------------------------------------------------------------------------

TEST_CASE("schedutil: the e5-2650-2s profile is a package-wide 1.2-2.6 GHz P-state with a 15 us rate limit, at 1.2 GHz when the run starts", "[hardware]") {
    Rig r("e5-2650-2s");
    REQUIRE(r.hw.governor() == "schedutil");
    REQUIRE(r.prof.opp_khz.front() == kFmin);
    REQUIRE(r.prof.opp_khz.back() == kFmax);
    REQUIRE(r.hw.max_khz(0) == kFmax);
    REQUIRE(r.prof.freq_transition_ns == 10 * kNsPerUs);
    REQUIRE(r.prof.sugov_rate_limit_ns == 0);  // so: 1.5 x transition latency
    // A machine idle since boot: its last evaluations asked for the lowest OPP.
    for (int c = 0; c < r.topo.nr_cpus(); ++c) CHECK(r.hw.freq_khz(c) == kFmin);
}

TEST_CASE("schedutil: the frequency follows utilisation with 25% headroom (f = lowest OPP >= 1.25 u fmax)", "[hardware]") {
    struct Row {
        double util;
        int64_t want;
    };
    // 0.5 -> 0.625 fmax = 1.625 GHz -> 1.7 GHz; 0.7 -> 2.275 -> 2.3; 0.8 -> 2.6 (the tipping point);
    // 0.9 -> above fmax -> fmax; 0.3 -> 0.975 GHz, below the lowest OPP -> fmin; 0 -> fmin.
    const Row rows[] = {{0.5, 1700000}, {0.7, 2300000}, {0.8, kFmax}, {0.9, kFmax}, {1.0, kFmax}, {0.3, kFmin}, {0.0, kFmin}};
    for (const Row& row : rows) {
        Rig r("e5-2650-2s");
        const int64_t want = row.want;
        INFO("util " << row.util << " of capacity");
        CHECK(want == lowest_opp_at_least(r.prof, std::min(1.0, 1.25 * row.util) * kFmax));
        if (row.util == 0.5) {
            CHECK(want >= 0.625 * kFmax);
            CHECK(want - 100000 < 0.625 * kFmax);  // and the lowest such OPP
        }
        r.advance_to(kStart);
        r.set_util(0, row.util);
        r.hw.util_changed(0);
        r.advance(r.prof.freq_transition_ns);
        CHECK(r.hw.freq_khz(0) == want);
    }
}

TEST_CASE("schedutil: a new frequency takes effect only after the transition latency, on every CPU of the domain", "[hardware]") {
    Rig r("e5-2650-2s", no_turbo());
    r.advance_to(kStart);
    r.set_util(0, 0.5);
    r.hw.util_changed(0);
    CHECK(r.hw.freq_khz(0) == kFmin);  // requested, not yet in effect
    CHECK(r.client.changed.empty());
    r.advance(r.prof.freq_transition_ns - 1);
    CHECK(r.hw.freq_khz(0) == kFmin);
    CHECK(r.client.changed.empty());
    r.advance(1);
    CHECK(r.engine.now() == kStart + r.prof.freq_transition_ns);
    CHECK(r.hw.freq_khz(0) == 1700000);
    // The package-wide P-state of Ivy Bridge-EP: all 16 CPUs of socket 0 (cores 0-7 and their
    // siblings 16-23) change, socket 1 does not.
    std::set<int> pkg0;
    for (int c = 0; c < 8; ++c) {
        pkg0.insert(c);
        pkg0.insert(c + 16);
    }
    CHECK(r.changed_set() == pkg0);
    CHECK(r.client.changed.size() == 16);
    for (int c : pkg0) {
        INFO("cpu " << c);
        CHECK(r.hw.freq_khz(c) == 1700000);
        CHECK(r.hw.speed(c) == Approx(1700000.0 / kFmax));
        CHECK(r.hw.invariant_speed(c) == Approx(1700000.0 / kFmax));
    }
    for (int c = 8; c < 16; ++c) CHECK(r.hw.freq_khz(c) == kFmin);
    for (int c = 24; c < 32; ++c) CHECK(r.hw.freq_khz(c) == kFmin);
}

TEST_CASE("schedutil: the first utilisation update after boot is evaluated whenever it comes", "[hardware]") {
    // sugov starts with need_freq_update set: the first update is never rate limited.
    for (Time at : {Time{0}, Time{1}, kNsPerMs, 5 * kNsPerSec}) {
        Rig r("e5-2650-2s");
        INFO("first util_changed at " << at << " ns");
        r.advance_to(at);
        r.set_util(0, 0.0);
        r.hw.util_changed(0);
        r.advance(r.prof.freq_transition_ns);
        CHECK(r.hw.freq_khz(0) == kFmin);
    }
}

TEST_CASE("schedutil: updates are rate limited to one per 1.5 x transition latency", "[hardware]") {
    Rig r("e5-2650-2s");
    const Time limit = r.prof.freq_transition_ns * 3 / 2;  // 15 us
    r.advance_to(kStart);
    r.set_util(0, 0.5);
    r.hw.util_changed(0);  // request 1.7 GHz at kStart
    r.advance_to(kStart + limit - kNsPerUs);
    REQUIRE(r.hw.freq_khz(0) == 1700000);
    r.set_util(0, 0.0);
    r.hw.util_changed(0);  // 14 us later: skipped
    r.advance(5 * limit);
    CHECK(r.hw.freq_khz(0) == 1700000);
    // After the limit the next update is evaluated.
    r.hw.util_changed(0);
    r.advance(r.prof.freq_transition_ns);
    CHECK(r.hw.freq_khz(0) == kFmin);
}

TEST_CASE("schedutil: the rate limit counts from the last frequency change, not from the last evaluation", "[hardware]") {
    // sugov_update_next_freq(): last_freq_update_time moves only when next_freq changes. An update
    // that computes the same frequency does not restart the window.
    Rig r("e5-2650-2s");
    const Time limit = r.prof.freq_transition_ns * 3 / 2;
    r.advance_to(kStart);
    r.set_util(0, 0.5);
    r.hw.util_changed(0);  // change to 1.7 GHz at kStart
    r.advance_to(kStart + 2 * limit);
    REQUIRE(r.hw.freq_khz(0) == 1700000);
    r.hw.util_changed(0);  // evaluated, same frequency: no change, window not restarted
    r.advance(limit / 3);
    r.set_util(0, 0.0);
    r.hw.util_changed(0);  // 2.33 limits after the last change: evaluated
    r.advance(r.prof.freq_transition_ns);
    CHECK(r.hw.freq_khz(0) == kFmin);
}

TEST_CASE("schedutil: a shared (package-wide) policy follows its busiest CPU", "[hardware]") {
    Rig r("e5-2650-2s");
    r.advance_to(kStart);
    r.set_util(0, 0.1);
    r.set_util(5, 0.7);   // same package
    r.set_util(19, 0.3);  // CPU 3's sibling, same package
    r.set_util(8, 1.0);   // the other package: not part of this policy
    r.hw.util_changed(0);
    r.advance(r.prof.freq_transition_ns);
    CHECK(r.hw.freq_khz(0) == 2300000);  // 1.25 x 0.7 x 2.6 GHz = 2.275 GHz -> 2.3 GHz
    CHECK(r.hw.freq_khz(5) == 2300000);
    // Socket 1: its own policy, driven by its own CPUs.
    r.set_util(8, 0.0);
    r.hw.util_changed(9);
    r.advance(r.prof.freq_transition_ns);
    CHECK(r.hw.freq_khz(8) == kFmin);
    CHECK(r.hw.freq_khz(0) == 2300000);
}

TEST_CASE("schedutil: with per-core P-states (xeon-2s-16c32t) only the core's two threads change clock", "[hardware]") {
    Rig r("xeon-2s-16c32t");
    REQUIRE(r.prof.freq_domain == "core");
    const int64_t fmax = r.prof.opp_khz.back();
    r.advance_to(kStart);
    r.set_util(0, 0.9);
    r.hw.util_changed(0);
    r.advance(r.prof.freq_transition_ns);
    CHECK(r.hw.freq_khz(0) == fmax);
    CHECK(r.hw.freq_khz(16) == fmax);
    CHECK(r.hw.freq_khz(1) == r.prof.opp_khz.front());
    CHECK(r.changed_set() == std::set<int>{0, 16});
}

TEST_CASE("schedutil, a policy per CPU (cpufreq_per_cpu): each CPU requests alone and the core runs at the higher request",
          "[hardware]") {
    // x86 under intel_cpufreq, or acpi-cpufreq with _PSD HW_ALL: sugov_update_single_freq() per CPU;
    // SMT siblings share the core's clock, which hardware sets from the higher P-state request.
    Rig r("xeon-2s-16c32t");
    REQUIRE(r.prof.cpufreq_per_cpu);
    const Time limit = r.prof.freq_transition_ns * 3 / 2;
    r.advance_to(kStart);
    r.set_util(0, 0.7);
    r.set_util(16, 0.1);  // CPU 0's sibling
    r.hw.util_changed(16);
    r.advance(r.prof.freq_transition_ns);
    CHECK(r.hw.freq_khz(16) == lowest_opp_at_least(r.prof, 1.25 * 0.1 * 3000000));  // its own need: 800 MHz
    r.hw.util_changed(0);
    r.advance(r.prof.freq_transition_ns);
    const int64_t f07 = lowest_opp_at_least(r.prof, 1.25 * 0.7 * 3000000);  // 2.8 GHz
    CHECK(r.hw.freq_khz(0) == f07);
    CHECK(r.hw.freq_khz(16) == f07);
    // CPU 16's own new request (1.2 GHz) does not lower the core: CPU 0's request stands.
    r.advance(2 * limit);
    r.set_util(16, 0.3);
    r.hw.util_changed(16);
    r.advance(r.prof.freq_transition_ns);
    CHECK(r.hw.freq_khz(16) == f07);
    CHECK(r.hw.freq_khz(0) == f07);
}

TEST_CASE("schedutil, a policy per CPU: no lower request until the CPU has been idle long enough to stop its tick "
          "(sugov_hold_freq)", "[hardware]") {
    Rig r("xeon-2s-16c32t");
    const Time limit = r.prof.freq_transition_ns * 3 / 2;
    const int64_t fmin = r.prof.opp_khz.front();
    r.advance_to(kStart);
    idle_history(r, 0, std::vector<Time>(8, 20 * kNsPerUs));  // the menu governor's history: short periods
    r.set_util(0, 0.7);
    r.hw.util_changed(0);
    r.advance(2 * limit);
    const int64_t high = r.hw.freq_khz(0);
    REQUIRE(high > fmin);
    // More short periods: menu keeps the tick, tick_nohz_idle_stop_tick() is not called and
    // idle_calls stays, so the CPU counts as busy and its request is held.
    r.set_util(0, 0.0);
    idle_history(r, 0, std::vector<Time>(3, 20 * kNsPerUs));
    r.hw.util_changed(0);
    r.advance(2 * limit);
    CHECK(r.hw.freq_khz(0) == high);
    // Long idle periods: the governor predicts more than a tick and lets it stop; the next
    // evaluation finds idle_calls moved and lowers the request.
    idle_history(r, 0, std::vector<Time>(8, 10 * kNsPerMs));
    r.hw.util_changed(0);
    r.advance(2 * limit);
    CHECK(r.hw.freq_khz(0) == fmin);
}

TEST_CASE("schedutil's iowait boost is used once per wakeup from I/O: each evaluation without one halves it, "
          "a tick without an update of the CPU drops it (sugov_iowait_apply)", "[hardware]") {
    // e5-2650-2s: one policy per package, so an evaluation started by any of its CPUs applies
    // (and halves) every CPU's boost.
    Rig r("e5-2650-2s", no_turbo());
    REQUIRE_FALSE(r.prof.cpufreq_per_cpu);
    r.advance_to(kStart);
    for (int c = 0; c < r.topo.nr_cpus(); ++c) r.set_util(c, 0.0);
    const Time step = 100 * kNsPerUs;  // past the 15 us rate limit, within a tick
    for (int i = 0; i < 4; ++i) {
        r.advance(step);
        r.hw.iowait_boost(3);
    }
    CHECK(r.hw.iowait_boost_value(3) == 1024);
    r.advance(r.prof.freq_transition_ns);
    CHECK(r.hw.freq_khz(3) == kFmax);
    // CPU 5 (same package) updates: the evaluation applies CPU 3's boost without a new wakeup
    // from I/O, halved; CPU 3 updates itself: halved again.
    r.advance(step);
    r.hw.util_changed(5);
    CHECK(r.hw.iowait_boost_value(3) == 512);
    r.advance(step);
    r.hw.util_changed(3);  // lowers the clock: the rate-limit window starts
    CHECK(r.hw.iowait_boost_value(3) == 256);
    // A wakeup from I/O doubles it once. Inside the window no evaluation uses it, so a second
    // one does not double it again (iowait_boost_pending).
    r.advance(kNsPerUs);
    r.hw.iowait_boost(3);
    CHECK(r.hw.iowait_boost_value(3) == 512);
    r.advance(kNsPerUs);
    r.hw.iowait_boost(3);
    CHECK(r.hw.iowait_boost_value(3) == 512);
    // The next evaluation uses it without halving it.
    r.advance(step);
    r.hw.util_changed(3);
    CHECK(r.hw.iowait_boost_value(3) == 512);
    // More than a tick without an update of CPU 3: the next evaluation drops its boost.
    r.advance(r.prof.freq_transition_ns);
    r.advance(kNsPerSec / r.prof.tick_hz + kNsPerUs);
    r.hw.util_changed(5);
    CHECK(r.hw.iowait_boost_value(3) == 0);
}

TEST_CASE("performance stays at fmax and powersave at fmin whatever the utilisation", "[hardware]") {
    for (double u : {0.0, 0.3, 0.9, 1.0}) {
        INFO("util " << u);
        Rig perf("e5-2650-2s", no_turbo(governor("performance")));
        Rig save("e5-2650-2s", no_turbo(governor("powersave")));
        for (Rig* r : {&perf, &save}) {
            r->advance_to(kStart);
            for (int c = 0; c < r->topo.nr_cpus(); ++c) r->set_util(c, u);
            for (int i = 0; i < 5; ++i) {
                r->hw.util_changed(0);
                r->hw.util_changed(8);
                r->advance(kNsPerMs);
            }
            CHECK(r->client.changed.empty());
        }
        for (int c = 0; c < perf.topo.nr_cpus(); ++c) {
            CHECK(perf.hw.freq_khz(c) == kFmax);
            CHECK(save.hw.freq_khz(c) == kFmin);
            CHECK(perf.hw.speed(c) == Approx(1.0));
            CHECK(save.hw.speed(c) == Approx(static_cast<double>(kFmin) / kFmax));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. ondemand and conservative (sampling governors, drivers/cpufreq/cpufreq_ondemand.c, cpufreq_conservative.c)
// ---------------------------------------------------------------------------------------------

namespace {
// Runs one sampling period with CPU `cpu` busy for `load` of it, up to the point where a
// frequency requested at the sample has taken effect.
void sample_period(Rig& r, int cpu, double load, int k) {
    const Time period = r.prof.sampling_ns;
    r.client.busy[static_cast<size_t>(cpu)] += static_cast<Time>(load * static_cast<double>(period));
    r.advance_to(static_cast<Time>(k) * period + r.prof.freq_transition_ns);
}
}  // namespace

TEST_CASE("ondemand: idle falls to fmin, fully busy jumps straight to fmax, in between f = fmin + load x (fmax - fmin)", "[hardware]") {
    Rig r("e5-2650-2s", governor("ondemand"));
    REQUIRE(r.prof.sampling_ns == 8 * kNsPerMs);
    CHECK(r.hw.freq_khz(0) == kFmin);  // a machine idle since boot
    int k = 0;
    sample_period(r, 0, 0.0, ++k);
    CHECK(r.hw.freq_khz(0) == kFmin);
    sample_period(r, 0, 1.0, ++k);
    CHECK(r.hw.freq_khz(0) == kFmax);  // above up_threshold (80%): straight to the top
    sample_period(r, 3, 0.0, ++k);     // another CPU of the policy idle, CPU 0 idle too
    CHECK(r.hw.freq_khz(0) == kFmin);
    sample_period(r, 5, 0.5, ++k);     // the busiest CPU of the policy counts
    CHECK(r.hw.freq_khz(0) == lowest_opp_at_least(r.prof, kFmin + 0.5 * (kFmax - kFmin)));
    CHECK(r.hw.freq_khz(0) == 1900000);
    sample_period(r, 5, 0.85, ++k);
    CHECK(r.hw.freq_khz(0) == kFmax);
    CHECK(r.hw.freq_khz(8) == kFmin);  // the other package saw no load
}

TEST_CASE("conservative: the frequency moves by one 5%-of-fmax step per sampling period", "[hardware]") {
    // cs_dbs_update(): requested_freq -= / += freq_step (5% of fmax = 130 MHz) per sample, kept
    // unrounded; the driver gets it with CPUFREQ_RELATION_L going down (lowest OPP >= request) and
    // CPUFREQ_RELATION_H going up (highest OPP <= request). fmin -> fmax takes
    // ceil((2.6 - 1.2) / 0.13) = 11 periods each way (~80-150 ms at HZ=250).
    Rig r("e5-2650-2s", governor("conservative"));
    CHECK(r.hw.freq_khz(0) == kFmin);  // a machine idle since boot
    const double step = 0.05 * kFmax;
    int k = 0;
    std::vector<int64_t> down, up;
    for (int i = 1; i <= 13; ++i) {
        sample_period(r, 0, 1.0, ++k);
        up.push_back(r.hw.freq_khz(0));
    }
    for (int i = 1; i <= 13; ++i) {
        sample_period(r, 0, 0.0, ++k);
        down.push_back(r.hw.freq_khz(0));
    }
    for (int i = 1; i <= 13; ++i) {
        INFO("period " << i << " idle: " << down[static_cast<size_t>(i - 1)] << " kHz; busy: " << up[static_cast<size_t>(i - 1)] << " kHz");
        CHECK(down[static_cast<size_t>(i - 1)] == lowest_opp_at_least(r.prof, std::max<double>(kFmin, kFmax - i * step)));
        CHECK(up[static_cast<size_t>(i - 1)] == highest_opp_at_most(r.prof, std::min<double>(kFmax, kFmin + i * step)));
    }
    auto periods_to = [](const std::vector<int64_t>& v, int64_t f) {
        return static_cast<int>(std::find(v.begin(), v.end(), f) - v.begin()) + 1;
    };
    CHECK(periods_to(down, kFmin) == 11);
    CHECK(periods_to(up, kFmax) == 11);
    // Monotone in each phase.
    CHECK(std::is_sorted(down.rbegin(), down.rend()));
    CHECK(std::is_sorted(up.begin(), up.end()));
}

TEST_CASE("conservative: a load between the 20% and 80% thresholds leaves the frequency where it is", "[hardware]") {
    Rig r("e5-2650-2s", governor("conservative"));
    int k = 0;
    sample_period(r, 0, 0.0, ++k);
    const int64_t f = r.hw.freq_khz(0);
    REQUIRE(f < kFmax);
    for (int i = 0; i < 5; ++i) sample_period(r, 0, 0.5, ++k);
    CHECK(r.hw.freq_khz(0) == f);
}

// ---------------------------------------------------------------------------------------------
// 3. cpuidle governor (drivers/cpuidle/governors/menu.c; e5-2650-2s: POLL 0/0, C1 1/1, C1E 10/80, C3 59/156,
//    C6 82/300 us exit/residency)
// ---------------------------------------------------------------------------------------------

TEST_CASE("cpuidle: a CPU idle since boot sits in the deepest state, C6", "[hardware]") {
    Rig r("e5-2650-2s");
    const int c6 = state_index(r.hw, "C6");
    REQUIRE(c6 == 4);
    for (int c = 0; c < r.topo.nr_cpus(); ++c) {
        CHECK(r.hw.idle_state(c) == c6);
        CHECK(r.hw.wake_latency(c) == 82 * kNsPerUs);
        // C6 is an MWAIT state (intel_idle): the idle task's flags are monitored, so a wake needs
        // no IPI, but it pays C6's exit latency.
        CHECK(r.hw.polling(c));
    }
}

TEST_CASE("cpuidle (menu): short idle periods pick a shallow state, long ones the deepest, the wake pays its exit latency", "[hardware]") {
    struct Row {
        Time len;
        const char* state;
        Time exit_ns;
    };
    const Row rows[] = {
        {500, "POLL", 0},                       // sub-us gaps: C1's 1 us exit is longer: poll
        {2 * kNsPerUs, "C1", kNsPerUs},         // us-scale request/reply gaps
        {100 * kNsPerUs, "C1E", 10 * kNsPerUs},
        {240 * kNsPerUs, "C3", 59 * kNsPerUs},  // learned as 181 us in C3: C3 again
        {5 * kNsPerMs, "C6", 82 * kNsPerUs},    // ms-scale: the deepest
    };
    for (const Row& row : rows) {
        Rig r("e5-2650-2s");
        REQUIRE(r.prof.idle_governor == "menu");
        // A hundred periods: the governor learns each one minus the exit latency of the state it
        // was spent in (menu_update()); the correction factor, which starts at unity after boot,
        // needs dozens of periods to follow them.
        INFO("a hundred idle periods of " << row.len << " ns");
        idle_history(r, 0, std::vector<Time>(100, row.len));
        CHECK(state_name(r.hw, 0) == row.state);
        CHECK(r.hw.wake_latency(0) == row.exit_ns);
        CHECK(r.hw.wake_latency(0) == r.hw.idle_states()[static_cast<size_t>(r.hw.idle_state(0))].exit_ns);
        // POLL polls; every other state is entered with MWAIT (intel_idle): no IPI either way.
        const auto& st = r.hw.idle_states()[static_cast<size_t>(r.hw.idle_state(0))];
        CHECK(st.polling == (row.exit_ns == 0));
        CHECK(st.mwait == (row.exit_ns != 0));
        CHECK(r.hw.polling(0));
        // Another CPU's history is its own.
        CHECK(state_name(r.hw, 1) == "C6");
        r.advance(row.len);
        r.hw.idle_exit(0);
        CHECK(r.hw.idle_state(0) == -1);  // running: no exit latency to pay
        CHECK(r.hw.wake_latency(0) == 0);
        CHECK_FALSE(r.hw.polling(0));
    }
}

TEST_CASE("cpuidle (menu): sub-microsecond periods give no typical interval, and the slow correction-factor average decides, then polls",
          "[hardware]") {
    // get_typical_interval() keeps periods in us: 500 ns periods are 0 us, no pattern. The
    // timer-based estimate starts at unity after boot and follows the periods with weight 1/8.
    Rig r("e5-2650-2s");
    idle_history(r, 0, std::vector<Time>(16, 500));
    CHECK(state_name(r.hw, 0) == "C6");  // 10 ms x (7/8)^16 = 1.2 ms: still deep
    idle_history(r, 0, std::vector<Time>(100, 500));
    CHECK(state_name(r.hw, 0) == "POLL");
    // Periods of 3 us: C1's exit latency fits the prediction, so C1 rather than polling.
    idle_history(r, 0, std::vector<Time>(100, 3 * kNsPerUs));
    CHECK(state_name(r.hw, 0) == "C1");
}

TEST_CASE("cpuidle: menu drops outlying periods (get_typical_interval), teo follows intercepts", "[hardware]") {
    // One early wakeup among long periods moves neither.
    std::vector<Time> one(7, 5 * kNsPerMs);
    one.push_back(2 * kNsPerUs);
    for (const char* gov : {"menu", "teo"}) {
        INFO(gov);
        Rig r("e5-2650-2s", [gov](MachineProfile& p) { p.idle_governor = gov; });
        idle_history(r, 0, one);
        CHECK(state_name(r.hw, 0) == "C6");
    }
    // Three of eight end early: menu drops the side farther from the mean (the short ones) and
    // predicts 5 ms; teo's 4th shortest is a long one.
    std::vector<Time> three(5, 5 * kNsPerMs);
    for (int i = 0; i < 3; ++i) three.push_back(2 * kNsPerUs);
    // Five of eight end early: menu drops the long ones, the five short ones agree: 2 us.
    std::vector<Time> five(3, 5 * kNsPerMs);
    for (int i = 0; i < 5; ++i) five.push_back(2 * kNsPerUs);
    for (const char* gov : {"menu", "teo"}) {
        INFO(gov);
        Rig a("e5-2650-2s", [gov](MachineProfile& p) { p.idle_governor = gov; });
        Rig b("e5-2650-2s", [gov](MachineProfile& p) { p.idle_governor = gov; });
        idle_history(a, 0, three);
        idle_history(b, 0, five);
        CHECK(state_name(a.hw, 0) == "C6");
        CHECK(state_name(b.hw, 0) == "C1");
    }
    // The mean of the eight (1.9 ms, C6) would have kept menu deep.
}

TEST_CASE("cpuidle (menu): an idle period is learned minus the exit latency of the state it was spent in", "[hardware]") {
    // menu_update(): last_residency includes the wakeup's exit; menu deducts it. Periods of 170 us
    // spent in C3 (59 us exit, 156 us residency) are learned as 111 us, under C3's residency, so
    // menu settles on C1E (80 us residency) instead of staying in C3; periods of 240 us (181 us
    // learned) keep C3.
    Rig r("e5-2650-2s");
    idle_history(r, 0, std::vector<Time>(16, 170 * kNsPerUs));
    CHECK(state_name(r.hw, 0) == "C1E");
    Rig longer("e5-2650-2s");
    idle_history(longer, 0, std::vector<Time>(16, 240 * kNsPerUs));
    CHECK(state_name(longer.hw, 0) == "C3");
    // A period under twice the exit latency counts half: 100 us in C6 (82 us exit) is 50 us.
    Rig halves("e5-2650-2s");
    idle_history(halves, 0, std::vector<Time>(8, 100 * kNsPerUs));
    CHECK(state_name(halves.hw, 0) != "C6");
}

TEST_CASE("cpuidle: the history window is the last eight idle periods", "[hardware]") {
    Rig r("e5-2650-2s");
    std::vector<Time> hist(8, 2 * kNsPerUs);
    idle_history(r, 0, hist);
    REQUIRE(state_name(r.hw, 0) == "C1");
    // Eight long periods push every short one out.
    r.hw.idle_exit(0);
    for (int i = 0; i < 8; ++i) {
        r.advance(kNsPerUs);
        r.hw.idle_enter(0);
        r.advance(5 * kNsPerMs);
        r.hw.idle_exit(0);
    }
    r.hw.idle_enter(0);
    CHECK(state_name(r.hw, 0) == "C6");
}

// ---------------------------------------------------------------------------------------------
// 4. Cache warmth (core-to-core transfer latencies by distance)
// ---------------------------------------------------------------------------------------------

namespace {
constexpr int64_t kFootprint = 32;  // KiB

// Refill cost when a task with a 32 KiB working set that just ran on `from` starts on `to`.
int64_t refill_after_move(Rig& r, int from, int to) {
    CacheWarmth t;
    t.footprint_kib = kFootprint;
    r.hw.switch_in(t, from);
    r.hw.switch_out(t, from);
    return r.hw.switch_in(t, to);
}
}  // namespace

TEST_CASE("cache: a new task starts cold and pays footprint x DRAM refill", "[hardware]") {
    Rig r("e5-2650-2s");
    CacheWarmth t;
    t.footprint_kib = kFootprint;
    CHECK(r.hw.switch_in(t, 3) == kFootprint * r.prof.refill_dram_ns_per_kib);
    CHECK(t.cpu == 3);
    CHECK(r.hw.refill_ns() == kFootprint * r.prof.refill_dram_ns_per_kib);
    CacheWarmth none;  // no working set: nothing to refill
    CHECK(r.hw.switch_in(none, 3) == 0);
}

TEST_CASE("cache: the refill cost of a migration grows with the distance travelled", "[hardware]") {
    Rig r("e5-2650-2s");
    REQUIRE(r.topo.classify(0, 16) == CpuDistance::smt);
    REQUIRE(r.topo.classify(0, 1) == CpuDistance::llc);
    REQUIRE(r.topo.classify(0, 8) == CpuDistance::cross_numa);
    const int64_t same = refill_after_move(r, 0, 0);
    const int64_t smt = refill_after_move(r, 0, 16);
    const int64_t llc = refill_after_move(r, 0, 1);
    const int64_t numa = refill_after_move(r, 0, 8);
    CHECK(same == 0);
    CHECK(smt == kFootprint * r.prof.refill_smt_ns_per_kib);
    CHECK(llc == kFootprint * r.prof.refill_llc_ns_per_kib);
    CHECK(numa == kFootprint * r.prof.refill_cross_numa_ns_per_kib);
    CHECK(same < smt);
    CHECK(smt < llc);
    CHECK(llc < numa);
    CHECK(r.hw.transfer_ns_per_kib(0, 0) == 0);
    CHECK(r.hw.transfer_ns_per_kib(0, 24) == r.prof.refill_cross_numa_ns_per_kib);  // CPU 8's sibling
}

TEST_CASE("cache: a working set left on a CPU fades with other work run there", "[hardware]") {
    Rig r("e5-2650-2s");
    const double cold = static_cast<double>(kFootprint * r.prof.refill_dram_ns_per_kib);
    const Time tau = r.prof.cache_evict_busy_ns;  // 2 ms of other work evicts 63%
    CacheWarmth t;
    t.footprint_kib = kFootprint;
    r.hw.switch_in(t, 0);
    std::vector<int64_t> cost;
    for (Time other : {Time{0}, tau / 4, tau, 3 * tau, 20 * tau}) {
        r.hw.switch_out(t, 0);
        r.client.busy[0] += other;  // other tasks run on CPU 0 meanwhile (no time passes)
        r.client.busy[1] += 50 * tau;  // work elsewhere does not touch CPU 0's caches
        cost.push_back(r.hw.switch_in(t, 0));
        INFO("other work " << other << " ns: refill " << cost.back() << " ns");
        CHECK(static_cast<double>(cost.back()) == Approx(cold * (1.0 - std::exp(-static_cast<double>(other) / static_cast<double>(tau)))).margin(1.0));
    }
    CHECK(cost.front() == 0);
    CHECK(std::is_sorted(cost.begin(), cost.end()));
    CHECK(static_cast<double>(cost.back()) == Approx(cold).margin(1.0));
    // The task's own running on CPU 0 between switch_in and switch_out is not "other work".
    r.hw.switch_in(t, 0);
    r.client.busy[0] += 10 * tau;
    r.hw.switch_out(t, 0);
    CHECK(r.hw.switch_in(t, 0) == 0);
}

TEST_CASE("cache: a working set fades with time away, and a long-gone set costs a DRAM refill wherever the task goes", "[hardware]") {
    Rig r("e5-2650-2s");
    const double cold = static_cast<double>(kFootprint * r.prof.refill_dram_ns_per_kib);
    const Time tau = r.prof.cache_evict_idle_ns;  // 100 ms
    CacheWarmth t;
    t.footprint_kib = kFootprint;
    r.hw.switch_in(t, 0);
    r.hw.switch_out(t, 0);
    r.advance(tau);
    CHECK(static_cast<double>(r.hw.switch_in(t, 0)) == Approx(cold * (1.0 - std::exp(-1.0))).margin(1.0));
    r.hw.switch_out(t, 0);
    r.advance(tau / 10);
    const int64_t short_away = r.hw.switch_in(t, 0);
    CHECK(short_away > 0);
    CHECK(static_cast<double>(short_away) < cold * 0.2);
    // Gone for 2 s: another core gets a DRAM-cold set, not an L3 transfer.
    r.hw.switch_out(t, 0);
    r.advance(20 * tau);
    CHECK(static_cast<double>(r.hw.switch_in(t, 1)) == Approx(cold).margin(1.0));
    // Half-faded: a move pays the warm part at the transfer cost and the rest from DRAM.
    r.hw.switch_out(t, 1);
    r.advance(tau);
    const double warm = std::exp(-1.0);
    const double mixed = kFootprint * (warm * static_cast<double>(r.prof.refill_smt_ns_per_kib) +
                                       (1.0 - warm) * static_cast<double>(r.prof.refill_dram_ns_per_kib));
    CHECK(static_cast<double>(r.hw.switch_in(t, 17)) == Approx(mixed).margin(1.0));  // CPU 1's sibling
}

TEST_CASE("cache: shared data costs nothing on the CPU that touched it last and the transfer cost elsewhere", "[hardware]") {
    Rig r("e5-2650-2s");
    const int64_t bytes = 4096;
    const int obj = 7;
    const int64_t before = r.hw.refill_ns();
    CHECK(r.hw.touch_shared(obj, bytes, 0) == 0);  // first touch: nobody had it
    CHECK(r.hw.touch_shared(obj, bytes, 0) == 0);  // same CPU again
    const int64_t to1 = r.hw.touch_shared(obj, bytes, 1);
    CHECK(to1 == bytes * r.prof.refill_llc_ns_per_kib / 1024);
    CHECK(r.hw.touch_shared(obj, bytes, 1) == 0);
    const int64_t to17 = r.hw.touch_shared(obj, bytes, 17);  // CPU 1's sibling: shares L1/L2
    CHECK(to17 == bytes * r.prof.refill_smt_ns_per_kib / 1024);
    const int64_t to8 = r.hw.touch_shared(obj, bytes, 8);  // the other socket
    CHECK(to8 == bytes * r.prof.refill_cross_numa_ns_per_kib / 1024);
    CHECK(to17 < to1);
    CHECK(to1 < to8);
    // Objects are independent.
    CHECK(r.hw.touch_shared(obj + 1, bytes, 8) == 0);
    CHECK(r.hw.touch_shared(obj + 1, bytes, 0) == bytes * r.prof.refill_cross_numa_ns_per_kib / 1024);
    CHECK(r.hw.refill_ns() - before == to1 + to17 + to8 + bytes * r.prof.refill_cross_numa_ns_per_kib / 1024);
    CHECK(r.hw.touch_shared(-1, bytes, 3) == 0);
    CHECK(r.hw.touch_shared(obj, 0, 3) == 0);
}

TEST_CASE("turbo: at P0 the E5-2650 v2 package runs at the bin for its cores in C0, below P0 at the OPP", "[hardware][turbo]") {
    Rig r("e5-2650-2s", governor("performance"));
    REQUIRE(r.prof.turbo_khz.size() == 8);
    REQUIRE(r.topo.same_core(0, 16));
    REQUIRE(r.topo.cpu(8).package != r.topo.cpu(0).package);
    const double t34 = 3400000.0 / kFmax, t32 = 3200000.0 / kFmax, t31 = 3100000.0 / kFmax;
    r.hw.set_busy(0, true);  // one core in C0: the 1-core bin
    CHECK(r.hw.effective_khz(0) == 3400000);
    CHECK(r.hw.freq_khz(0) == kFmax);  // the OPP the governor set is P0
    CHECK(r.hw.speed(0) == Approx(t34));
    CHECK(r.hw.invariant_speed(0) == Approx(1.0));  // PELT's frequency invariance is capped at 1
    r.hw.set_busy(16, true);  // its SMT sibling: still one core
    CHECK(r.hw.effective_khz(0) == 3400000);
    r.hw.set_busy(8, true);  // the other package has its own clock and count
    CHECK(r.hw.effective_khz(0) == 3400000);
    CHECK(r.hw.effective_khz(8) == 3400000);
    r.client.changed.clear();
    r.hw.set_busy(1, true);  // two cores: one bin less, and the package's CPUs are told
    CHECK(r.hw.effective_khz(0) == 3300000);
    CHECK(r.changed_set().count(0) == 1);
    CHECK(r.changed_set().count(8) == 0);
    r.hw.set_busy(2, true);  // three cores
    CHECK(r.hw.effective_khz(0) == 3200000);
    CHECK(r.hw.speed(1) == Approx(t32));
    for (int c = 3; c < 8; ++c) r.hw.set_busy(c, true);  // all eight cores
    CHECK(r.hw.effective_khz(0) == 3100000);
    CHECK(r.hw.speed(7) == Approx(t31));
    CHECK(r.hw.speed(16) == Approx(t31 * 0.62));  // SMT contention on top of the clock
    for (int c = 1; c < 8; ++c) r.hw.set_busy(c, false);
    CHECK(r.hw.effective_khz(0) == 3400000);

    // Nothing in C0: the package reports its OPP.
    r.hw.set_busy(0, false);
    r.hw.set_busy(16, false);
    CHECK(r.hw.effective_khz(0) == kFmax);
    CHECK(r.hw.effective_khz(8) == 3400000);  // the other package still has CPU 8

    // Below P0 there is no turbo: the clock is the OPP, and frequency invariance its ratio to the
    // highest OPP (acpi-cpufreq without CPPC: the nominal frequency).
    Rig save("e5-2650-2s", governor("powersave"));
    save.hw.set_busy(0, true);
    CHECK(save.hw.effective_khz(0) == kFmin);
    CHECK(save.hw.speed(0) == Approx(static_cast<double>(kFmin) / kFmax));
    CHECK(save.hw.invariant_speed(0) == Approx(static_cast<double>(kFmin) / kFmax));

    // The bins count the package's cores whatever its clock domains (per-core P-states).
    Rig per_core("e5-2650-2s", [](MachineProfile& p) {
        p.governor = "performance";
        p.freq_domain = "core";
    });
    for (int c = 0; c < 8; ++c) per_core.hw.set_busy(c, true);
    CHECK(per_core.hw.effective_khz(0) == 3100000);
    CHECK(per_core.hw.effective_khz(7) == 3100000);

    // A CPU idling in a polling state is in C0: its core counts. (teo polls after sub-us periods;
    // menu takes C1 unless a timer is due.)
    Rig poll("e5-2650-2s", [](MachineProfile& p) {
        p.governor = "performance";
        p.idle_governor = "teo";
    });
    REQUIRE(poll.prof.effective_idle_states().front().polling);
    poll.hw.set_busy(0, true);
    REQUIRE(poll.hw.effective_khz(0) == 3400000);
    poll.hw.set_busy(1, true);
    poll.hw.set_busy(1, false);
    for (int i = 0; i < 8; ++i) {  // short idle periods teach the governor to poll
        poll.hw.idle_enter(1);
        poll.hw.idle_exit(1);
    }
    poll.hw.idle_enter(1);
    REQUIRE(poll.hw.idle_state(1) == 0);
    CHECK(poll.hw.effective_khz(0) == 3300000);
    poll.hw.idle_exit(1);
}

TEST_CASE("turbo: schedutil's drop from P0 ends the boost, and its return restores the bin", "[hardware][turbo]") {
    Rig r("e5-2650-2s");
    r.advance_to(kStart);
    r.hw.set_busy(0, true);
    r.set_util(0, 1.0);
    r.hw.util_changed(0);
    r.advance(kNsPerMs);
    REQUIRE(r.hw.freq_khz(0) == kFmax);
    CHECK(r.hw.effective_khz(0) == 3400000);
    r.set_util(0, 0.2);
    r.hw.util_changed(0);
    r.advance(kNsPerMs);
    REQUIRE(r.hw.freq_khz(0) < kFmax);
    CHECK(r.hw.effective_khz(0) == r.hw.freq_khz(0));
    CHECK(r.hw.speed(0) == Approx(static_cast<double>(r.hw.freq_khz(0)) / kFmax));
    r.set_util(0, 1.0);
    r.hw.util_changed(0);
    r.advance(kNsPerMs);
    CHECK(r.hw.effective_khz(0) == 3400000);
}

// ---------------------------------------------------------------------------------------------
// 5. SMT contention
// ---------------------------------------------------------------------------------------------

TEST_CASE("SMT: a thread runs at capacity x frequency ratio alone and at smt_factor of that while its sibling is busy", "[hardware]") {
    Rig r("e5-2650-2s", no_turbo([](MachineProfile& p) { p.governor = "performance"; }));
    REQUIRE(r.prof.smt_factor_pct == 62);
    REQUIRE(r.topo.same_core(0, 16));
    const double f = 0.62;
    CHECK(r.hw.speed(0) == Approx(1.0));

    r.hw.set_busy(16, true);
    CHECK(r.hw.speed(0) == Approx(f));
    CHECK(r.hw.invariant_speed(0) == Approx(1.0));  // PELT invariance ignores the contention
    CHECK(r.hw.speed(16) == Approx(1.0));           // CPU 0 is idle: 16 has the core
    CHECK(r.client.changed == std::vector<int>{0});  // the sibling only

    r.client.changed.clear();
    r.hw.set_busy(0, true);
    CHECK(r.hw.speed(16) == Approx(f));
    CHECK(r.hw.speed(0) == Approx(f));
    CHECK(r.client.changed == std::vector<int>{16});

    r.client.changed.clear();
    r.hw.set_busy(1, true);  // another core
    r.hw.set_busy(8, true);  // another socket
    CHECK(r.hw.speed(0) == Approx(f));
    CHECK(r.hw.speed(16) == Approx(f));
    CHECK(std::count(r.client.changed.begin(), r.client.changed.end(), 0) == 0);
    CHECK(std::count(r.client.changed.begin(), r.client.changed.end(), 16) == 0);
    CHECK(r.hw.speed(17) == Approx(f));  // CPU 1's sibling is the one that slows
    CHECK(r.changed_set() == std::set<int>{17, 24});

    r.client.changed.clear();
    r.hw.set_busy(16, false);
    CHECK(r.hw.speed(0) == Approx(1.0));
    CHECK(r.client.changed == std::vector<int>{0});
    r.client.changed.clear();
    r.hw.set_busy(16, false);  // no change, no call
    CHECK(r.client.changed.empty());
}

TEST_CASE("SMT: contention scales the current frequency, not the maximum", "[hardware]") {
    Rig r("e5-2650-2s", no_turbo());
    r.advance_to(kStart);
    r.set_util(0, 0.0);
    r.hw.util_changed(0);
    r.advance(r.prof.freq_transition_ns);
    REQUIRE(r.hw.freq_khz(0) == kFmin);
    const double ratio = static_cast<double>(kFmin) / kFmax;
    CHECK(r.hw.speed(0) == Approx(ratio));
    r.hw.set_busy(16, true);
    CHECK(r.hw.speed(0) == Approx(ratio * 0.62));
    CHECK(r.hw.invariant_speed(0) == Approx(ratio));
    // A frequency change keeps the contention.
    r.set_util(0, 1.0);
    r.advance(kNsPerMs);
    r.hw.util_changed(0);
    r.advance(r.prof.freq_transition_ns);
    CHECK(r.hw.speed(0) == Approx(0.62));
    r.hw.set_busy(16, false);
    CHECK(r.hw.speed(0) == Approx(1.0));
}

TEST_CASE("SMT: smt_factor_pct 100 means no contention", "[hardware]") {
    Rig r("e5-2650-2s", no_turbo([](MachineProfile& p) {
              p.smt_factor_pct = 100;
              p.governor = "performance";
          }));
    r.hw.set_busy(16, true);
    CHECK(r.hw.speed(0) == Approx(1.0));
    CHECK(r.client.changed.empty());
}

// ---------------------------------------------------------------------------------------------
// 6. End to end: the bouncing-pair low-frequency effect (schedutil sees half the load on each CPU)
// ---------------------------------------------------------------------------------------------

namespace {
using json = nlohmann::json;

// Every "loop": N in the document becomes `loops`.
void set_loops(json& j, int loops) {
    if (j.is_object()) {
        for (auto& [k, v] : j.items()) {
            if (k == "loop" && v.is_number_integer())
                v = loops;
            else
                set_loops(v, loops);
        }
    } else if (j.is_array()) {
        for (auto& v : j) set_loops(v, loops);
    }
}

RunMetrics run_case(const Scenario& sc, const std::string& name) {
    for (const auto& c : sc.cases)
        if (c.name == name) {
            RunSpec spec = make_run_spec(sc, c, sc.policies.front(), sc.seeds.front());
            const RunResult res = run_simulation(spec);
            REQUIRE(res.completed);
            return res.metrics;
        }
    FAIL("no case " << name);
    return {};
}
}  // namespace

TEST_CASE("end to end: a request/reply pair split over two cores runs at a lower clock under schedutil than stacked on one CPU", "[hardware]") {
    std::ifstream in(std::string(WAKESIM_SOURCE_DIR) + "/scenarios/reqreply-e5-governors.json");
    REQUIRE(in.good());
    json d = json::parse(in);
    set_loops(d, 30000);
    d["run"] = {{"warmup_ops", 10000}, {"seeds", {1}}};
    const Scenario sc = parse_scenario(d, "reqreply-e5-governors.json");

    const RunMetrics same = run_case(sc, "same-cpu/schedutil");
    const RunMetrics split = run_case(sc, "other-core/schedutil");
    const RunMetrics same_perf = run_case(sc, "same-cpu/performance");
    const RunMetrics split_perf = run_case(sc, "other-core/performance");

    for (const RunMetrics* m : {&same, &split, &same_perf, &split_perf}) {
        CHECK(m->per_cpu_integers(Metric::cpu_freq_khz).size() == 32);
        const auto has = [](const Breakdown& b, const std::string& key) {
            for (const auto& kv : b)
                if (kv.first == key) return true;
            return false;
        };
        CHECK(has(m->breakdown(Metric::idle_residency), "C6"));
        CHECK(has(m->breakdown(Metric::idle_residency), "POLL"));
        double opp_sum = 0;
        for (const auto& [khz, frac] : m->breakdown(Metric::freq_residency)) opp_sum += frac;
        CHECK(opp_sum == Approx(1.0).margin(1e-3));
        CHECK(m->integer(Metric::time_lost_cache_refill_ns) >= 0);
    }
    const auto busy = [](const RunMetrics& m) { return m.integer(Metric::freq_khz_busy); };
    INFO("schedutil busy kHz: same CPU " << busy(same) << ", split " << busy(split));
    // Stacked, CPU 0 is nearly always busy: schedutil runs it at the top.
    CHECK(busy(same) >= 2400000);
    // Split, each CPU is about half busy and the package P-state sinks (f' = 1.25 b f < f).
    CHECK(busy(split) < busy(same));
    CHECK(busy(split) <= 2000000);
    // performance: P0 whatever the placement; a strict ping-pong keeps one core in C0 at a time,
    // so the package runs at the E5-2650 v2's one-core turbo bin (split, but for the moments an
    // idle CPU of the pair leaves its state for its tick while the other runs).
    CHECK(busy(same_perf) == 3400000);
    CHECK(busy(split_perf) == Approx(3400000).margin(100));
    CHECK(same_perf.integer(Metric::freq_khz_mean) >= kFmax);
    // The clock, not the OPP: turbo while a core of the package is in C0, P0's 2.6 GHz while none is.
    CHECK(split_perf.per_cpu_integers(Metric::cpu_freq_khz).at(1) > kFmax);
    // Split, the pipe data and the reply cross cores: refill is charged; stacked it is not.
    CHECK(split_perf.integer(Metric::time_lost_cache_refill_ns) > same_perf.integer(Metric::time_lost_cache_refill_ns));
}

TEST_CASE("distance: a remote wakeup pays each moved cache line's cost at the pair's distance, from the preset's core-to-core latencies", "[hardware][distance]") {
    // epyc-zen4-2s: line_smt 9, line_llc 22, line_cross_llc 100, line_cross_numa 197 ns.
    Rig r("epyc-zen4-2s");
    REQUIRE(r.topo.classify(0, 192) == CpuDistance::smt);
    REQUIRE(r.topo.classify(0, 1) == CpuDistance::llc);
    REQUIRE(r.topo.classify(0, 8) == CpuDistance::cross_llc);
    REQUIRE(r.topo.classify(0, 96) == CpuDistance::cross_numa);
    CHECK(r.hw.line_extra_ns(0, 192) == 9 - 22);
    CHECK(r.hw.line_extra_ns(0, 1) == 0);
    CHECK(r.hw.line_extra_ns(0, 8) == 100 - 22);
    CHECK(r.hw.line_extra_ns(0, 96) == 197 - 22);
    CHECK(r.hw.line_extra_ns(-1, 96) == 0);  // interrupt context with no CPU: nothing to add
    // Without line_llc the wake costs do not depend on the pair.
    Rig flat("epyc-zen4-2s", [](MachineProfile& p) { p.line_llc_ns = 0; });
    CHECK(flat.hw.line_extra_ns(0, 96) == 0);
    CHECK(flat.hw.line_extra_ns(0, 192) == 0);
    // An unset farther class costs what the next closer one does.
    Rig near("epyc-zen4-2s", [](MachineProfile& p) { p.line_cross_numa_ns = 0; });
    CHECK(near.hw.line_extra_ns(0, 96) == 100 - 22);
}

TEST_CASE("distance: a pipe pair pinned across sockets pays wake_remote_lines extra line costs per wakeup, and ipi_lines or the polled flag's line", "[hardware][distance]") {
    // Two wakeups per round trip, each with 3 lines in try_to_wake_up and, on the critical path,
    // 2 in the IPI to a CPU idle by HLT, or 1 (the flag it monitors) to a CPU in an MWAIT state
    // (acpi_idle's FFH C1 on EPYC). Across sockets 2 x 5 x (197 - 22) ns = 1.75 us, or
    // 2 x 4 x (197 - 22) = 1.40 us, more per round trip than the same pair with distance-blind
    // costs. Within one CCX nothing changes.
    const auto usec = [](const std::string& cpus_b, bool lines, bool mwait) {
        json d = json::parse(R"({"machine": {"preset": "epyc-zen4-2s", "profile": {"base": "epyc-zen4-2s", "cost_jitter_pct": 0, "governor": "performance"}},
          "workload": {"kind": "pipe", "loops": 3000, "cpus": "0"}, "policies": ["plain"], "run": {"warmup_ops": 500, "seeds": [1]}})");
        d["workload"]["cpus_b"] = cpus_b;
        if (!lines) d["machine"]["profile"]["line_llc"] = "0ns";
        if (!mwait)  // C1 entered by HLT
            d["machine"]["profile"]["idle_states"] = json::parse(R"([
              {"name": "POLL", "exit_latency": "0ns", "target_residency": "0ns", "polling": true},
              {"name": "C1", "exit_latency": "1us", "target_residency": "2us"},
              {"name": "C2", "exit_latency": "400us", "target_residency": "800us"}])");
        const Scenario sc = parse_scenario(d, "distance.json");
        return run_case(sc, sc.cases.front().name).get(Metric::usec_per_op);
    };
    for (const bool mwait : {false, true}) {
        const double numa = usec("96", true, mwait), numa_blind = usec("96", false, mwait);
        const double ccx = usec("8", true, mwait), ccx_blind = usec("8", false, mwait);
        const double llc = usec("1", true, mwait), llc_blind = usec("1", false, mwait);
        const int lines = mwait ? 4 : 5;
        INFO((mwait ? "MWAIT C1" : "HLT C1") << ", us per round trip: other socket " << numa << " (blind " << numa_blind
                                              << "), other CCX " << ccx << " (" << ccx_blind << "), same CCX " << llc << " ("
                                              << llc_blind << ")");
        CHECK(numa - numa_blind == Approx(2 * lines * 0.175).margin(0.1));
        CHECK(ccx - ccx_blind == Approx(2 * lines * 0.078).margin(0.1));
        CHECK(llc == Approx(llc_blind).margin(0.001));
        CHECK(llc < ccx);
        CHECK(ccx < numa);
    }
}

TEST_CASE("pipe_lines: each pipe read and write pulls the pipe's own lines from the CPU that used it last, at the pair's full line cost", "[hardware][distance]") {
    // A ping-pong round trip is two writes and two reads, each on the other side's CPU from the
    // pipe's last use: 4 x pipe_lines x line cost. epyc-zen4-2s: line_llc 22, line_cross_numa 197
    // ns. Both tasks on one CPU: the lines never leave it.
    const auto usec = [](const std::string& cpus_b, int lines) {
        json d = json::parse(R"({"machine": {"preset": "epyc-zen4-2s", "profile": {"base": "epyc-zen4-2s", "cost_jitter_pct": 0, "governor": "performance"}},
          "workload": {"kind": "pipe", "loops": 3000, "cpus": "0"}, "policies": ["plain"], "run": {"warmup_ops": 500, "seeds": [1]}})");
        d["workload"]["cpus_b"] = cpus_b;
        d["machine"]["profile"]["pipe_lines"] = lines;
        const Scenario sc = parse_scenario(d, "pipe_lines.json");
        return run_case(sc, sc.cases.front().name).get(Metric::usec_per_op);
    };
    const double numa = usec("96", 6) - usec("96", 0);
    const double llc = usec("1", 6) - usec("1", 0);
    const double same = usec("0", 6) - usec("0", 0);
    INFO("us more per round trip with 6 lines: other socket " << numa << ", same CCX " << llc << ", same CPU " << same);
    CHECK(numa == Approx(4 * 6 * 0.197).margin(0.05));
    CHECK(llc == Approx(4 * 6 * 0.022).margin(0.05));
    CHECK(same == Approx(0).margin(0.001));
}

TEST_CASE("wake_remote_rq: a waker that enqueues on a busy CPU of its LLC pays it, a wake-list wakeup of an idle CPU pays wake_remote", "[hardware][wake]") {
    // ttwu_queue_cond(): a busy target in the waker's LLC is enqueued on by the waker itself,
    // under the target's rq lock (ttwu_do_activate); an idle one gets the wake list and an IPI.
    // W on CPU 0 runs 50 us and wakes R on CPU 1, which a hog keeps busy or not: 2 us more of
    // wake_remote_rq slows W's loop by 2 us per wakeup only when CPU 1 is busy.
    const auto usec = [](bool busy, const std::string& rq) {
        json d = json::parse(R"({"machine": {"preset": "kvm-2vcpu-spr", "profile": {"base": "kvm-2vcpu-spr", "cost_jitter_pct": 0}},
          "workload": {"kind": "program", "channels": {"ch": {}}, "tasks": [
            {"name": "W", "cpus": "0", "program": [{"loop": 400, "do": [{"run": "50us"}, {"post": "ch"}, {"op": 1}]}]},
            {"name": "R", "cpus": "1", "program": [{"loop": 400, "do": [{"wait": "ch"}, {"run": "1us"}]}]}]},
          "policies": ["plain"], "run": {"warmup_ops": 50, "seeds": [1]}})");
        if (busy) d["workload"]["tasks"].push_back(json::parse(R"({"name": "H", "cpus": "1", "program": [{"loop": 30, "do": [{"run": "1ms"}]}]})"));
        d["machine"]["profile"]["wake_remote_rq"] = rq;
        const Scenario sc = parse_scenario(d, "wake_remote_rq.json");
        return run_case(sc, sc.cases.front().name).get(Metric::usec_per_op);
    };
    const double busy = usec(true, "4.65us") - usec(true, "2.65us");
    const double idle = usec(false, "4.65us") - usec(false, "2.65us");
    INFO("us more per wakeup with wake_remote_rq 2 us higher: CPU 1 busy " << busy << ", idle " << idle);
    CHECK(busy == Approx(2.0).margin(0.05));
    CHECK(idle == Approx(0).margin(0.001));
}

namespace {

// W on CPU 0 runs 50 us and wakes R on CPU 1, 400 times; `extra` adds tasks and `profile` sets
// parameters of kvm-2vcpu-spr (no jitter). Returns the finished run.
RunResult guest_wakes(const json& profile, const std::string& r_policy, const json& extra = json::array()) {
    json d = json::parse(R"({"machine": {"preset": "kvm-2vcpu-spr", "profile": {"base": "kvm-2vcpu-spr", "cost_jitter_pct": 0}},
      "workload": {"kind": "program", "channels": {"ch": {}}, "tasks": [
        {"name": "W", "cpus": "0", "role": "requester", "program": [{"loop": 400, "do": [{"run": "50us"}, {"post": "ch"}, {"op": 1}]}]},
        {"name": "R", "cpus": "1", "role": "server", "program": [{"loop": 400, "do": [{"wait": "ch"}, {"run": "1us"}]}]}]},
      "policies": ["plain"], "run": {"warmup_ops": 50, "seeds": [1]}})");
    for (auto& [k, v] : profile.items()) d["machine"]["profile"][k] = v;
    d["workload"]["tasks"][1]["policy"] = r_policy;
    for (const auto& t : extra) d["workload"]["tasks"].push_back(t);
    const Scenario sc = parse_scenario(d, "guest_wakes.json");
    const CaseSpec& c = sc.cases.front();
    return run_simulation(make_run_spec(sc, c, sc.policies.front(), sc.seeds.front()));
}

const json kHog = json::parse(R"([{"name": "H", "cpus": "1", "program": [{"loop": 30, "do": [{"run": "1ms"}]}]}])");
// CPU 1 busy but yielding now and then (a 1 us sleep every 20 us), so that a SCHED_BATCH wakee
// runs soon without preempting it.
const json kBusy = json::parse(R"([{"name": "H", "cpus": "1", "program": [{"loop": 1500, "do": [{"run": "20us"}, {"sleep": "1us"}]}]}])");

double per_op_us(const RunResult& r, Metric m) {
    return r.metrics.get(m) / 1000.0 / r.metrics.get(Metric::ops);
}

}  // namespace

TEST_CASE("ipi_send: the waker pays for each IPI it sends, to a CPU it preempts or a halted one, and nothing when it sends none", "[hardware][wake][ipi]") {
    // In a guest the APIC write is a VM exit (kvm-2vcpu-spr measures 11.2 us). R preempting the
    // hog on CPU 1 needs a reschedule IPI; R as SCHED_BATCH next to a busy task does not
    // preempt, so none is sent; with CPU 1 idle (past idle_entry) the wake-list IPI wakes it.
    // 5 us more of ipi_send: W's 50 us loop is 5 us slower per wakeup where an IPI goes,
    // unchanged where none does.
    const auto usec = [](const std::string& send, const std::string& policy, const json& extra) {
        return guest_wakes({{"ipi_send", send}}, policy, extra).metrics.get(Metric::usec_per_op);
    };
    const double preempt = usec("16.2us", "normal", kHog) - usec("11.2us", "normal", kHog);
    const double no_ipi = usec("16.2us", "batch", kBusy) - usec("11.2us", "batch", kBusy);
    const double halted = usec("16.2us", "normal", json::array()) - usec("11.2us", "normal", json::array());
    INFO("us more per wakeup with ipi_send 5 us higher: preempting " << preempt << ", not preempting " << no_ipi << ", onto the halted CPU " << halted);
    CHECK(preempt == Approx(5.0).margin(0.1));
    CHECK(no_ipi == Approx(0).margin(0.05));  // the other task's 1 us sleeps let a few IPIs through
    CHECK(halted == Approx(5.0).margin(0.1));
}

TEST_CASE("ipi_send_overlaps: the IPI leaves when the send begins, and the waker still pays the whole send", "[hardware][wake][ipi]") {
    // KVM delivers a guest's IPI inside the exit its APIC write causes (kvm_vcpu_kick() wakes
    // the halted vCPU's thread before the exit returns). With the overlap, a 5 us dearer send
    // delays the wakee on the halted CPU by nothing and still costs W 5 us a wakeup; without
    // it, the wakee waits for the send too.
    const auto run = [](const std::string& send, bool overlap) {
        return guest_wakes({{"ipi_send", send}, {"ipi_send_overlaps", overlap}}, "normal");
    };
    for (bool overlap : {false, true}) {
        const RunResult lo = run("11.2us", overlap), hi = run("16.2us", overlap);
        const double waker = hi.metrics.get(Metric::usec_per_op) - lo.metrics.get(Metric::usec_per_op);
        const double wake_latency = (hi.metrics.get(Metric::wake_latency_ns_mean) - lo.metrics.get(Metric::wake_latency_ns_mean)) / 1000.0;
        INFO("overlap " << overlap << ": us more per wakeup for W " << waker << ", for R's wake latency " << wake_latency);
        CHECK(waker == Approx(5.0).margin(0.1));
        CHECK(wake_latency == Approx(overlap ? 0.0 : 5.0).margin(0.1));
    }
}

TEST_CASE("ipi_wakee and wake_remote_rq_wakee: the task a wakeup switches in pays by the wakeup's path", "[hardware][wake][ipi]") {
    // R's CPU time per wakeup (its 1 us of work, the switch and what the path costs it): woken
    // onto the halted CPU 1 through an IPI it pays ipi_wakee; woken onto CPU 1 while another
    // task runs there, without preempting (SCHED_BATCH), it pays wake_remote_rq_wakee and no
    // ipi_wakee (the other task's 1 us sleeps let a few wakeups through the wake list).
    const auto r_cpu = [](const json& prof, const std::string& policy, bool busy) {
        return per_op_us(guest_wakes(prof, policy, busy ? kBusy : json::array()), Metric::cpu_time_server_ns);
    };
    const json base = {{"ipi_wakee", "11.8us"}, {"wake_remote_rq_wakee", "1.1us"}};
    const json more_ipi = {{"ipi_wakee", "14.8us"}, {"wake_remote_rq_wakee", "1.1us"}};
    const json more_rq = {{"ipi_wakee", "11.8us"}, {"wake_remote_rq_wakee", "3.1us"}};
    const double halted_ipi = r_cpu(more_ipi, "normal", false) - r_cpu(base, "normal", false);
    const double halted_rq = r_cpu(more_rq, "normal", false) - r_cpu(base, "normal", false);
    const double busy_ipi = r_cpu(more_ipi, "batch", true) - r_cpu(base, "batch", true);
    const double busy_rq = r_cpu(more_rq, "batch", true) - r_cpu(base, "batch", true);
    INFO("R's us more per wakeup: halted CPU, ipi_wakee +3 " << halted_ipi << ", wake_remote_rq_wakee +2 " << halted_rq
                                                              << "; busy CPU " << busy_ipi << ", " << busy_rq);
    CHECK(halted_ipi == Approx(3.0).margin(0.1));
    CHECK(halted_rq == Approx(0).margin(0.01));
    CHECK(busy_ipi == Approx(0).margin(0.3));  // (and move the other task's timing a little)
    CHECK(busy_rq > 1.6);
    CHECK(busy_rq <= 2.0);
}

TEST_CASE("idle_entry: a wakeup while the idle loop is still entering finds it polling and sends no IPI", "[hardware][wake][idle]") {
    // R's CPU goes idle right after R's 1 us of work. W's wakeups come 50 us apart: past an
    // 8 us entry, every one is a wake-list IPI; with an entry longer than the gap, every one
    // finds the idle task polling (and R runs once the entry is done).
    // A polled wakeup sends nothing, so the wakee pays no ipi_wakee (11.8 us on this machine).
    const auto kinds = [](const std::string& entry) {
        const RunResult r = guest_wakes({{"idle_entry", entry}}, "normal");
        const double wakes = r.metrics.get(Metric::wakeups);
        return std::tuple{wakes, r.metrics.get(Metric::wakeups_ipi), r.metrics.get(Metric::wakeups_poll),
                          r.metrics.get(Metric::cpu_time_server_ns) / 1000.0 / wakes};
    };
    const auto [wakes_short, ipi_short, poll_short, r_short] = kinds("8us");
    const auto [wakes_long, ipi_long, poll_long, r_long] = kinds("100us");
    INFO("idle_entry 8 us: " << wakes_short << " wakeups, " << ipi_short << " IPIs, " << poll_short << " polled, R "
                             << r_short << " us each; 100 us: " << wakes_long << ", " << ipi_long << ", " << poll_long << ", " << r_long);
    CHECK(ipi_short >= 0.95 * wakes_short);
    // W's tick kicks CPU 1 for the nohz stats pass; CPU 1 leaves idle and enters it again, and a
    // wakeup inside that second entry finds it polling.
    CHECK(poll_short <= 1);
    CHECK(ipi_long == 0);
    CHECK(poll_long >= 0.95 * wakes_long);
    CHECK(wakes_long >= 50);
    CHECK(r_short > 11.8);  // R's 1 us and its syscalls, switch and ipi_wakee per wakeup
    CHECK(r_long < 4.0);    // the same without ipi_wakee (its wakeups, later, read 2-3 posts each)
}

TEST_CASE("schedutil reads cpu_util_cfs_boost(): two tasks waking together on one CPU get a higher clock than one task doing the same work", "[hardware][schedutil]") {
    // e5-2650-2s, schedutil, CPU 0. "one": a task runs 2 ms every 4 ms. "two": two tasks run 1 ms
    // each every 4 ms, woken at the same instant, so one waits while the other runs. util_avg is
    // about 512 either way; runnable_avg is 512 for one task and 768 for two (both runnable for
    // the first half of the busy time), and runnable boosting (v6.5) makes schedutil ask for
    // 1.25 x 768/1024 x 2.6 GHz instead of 1.25 x 512/1024 x 2.6 GHz.
    const auto busy_khz = [](int count, const std::string& run) {
        // Turbo off (cpufreq boost 0): the arithmetic above is at 2.6 GHz.
        json d = json::parse(R"({"machine": {"preset": "e5-2650-2s", "profile": {"turbo": []}},
          "workload": {"kind": "program", "timers": {"tick": {"mode": "absolute"}},
            "tasks": [{"name": "w", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "1ms"}, {"timer": "tick", "period": "4ms"}]}]}]},
          "policies": ["plain"], "run": {"duration": "400ms", "warmup": "200ms", "seeds": [1]}})");
        d["workload"]["tasks"][0]["count"] = count;
        d["workload"]["tasks"][0]["program"][0]["do"][0]["run"] = run;
        const Scenario sc = parse_scenario(d, "boost.json");
        const CaseSpec& c = sc.cases.front();
        const RunResult res = run_simulation(make_run_spec(sc, c, sc.policies.front(), sc.seeds.front()));
        return res.metrics.per_cpu_integers(Metric::cpu_freq_khz).at(0);
    };
    const int64_t one = busy_khz(1, "2ms"), two = busy_khz(2, "1ms");
    INFO("CPU 0 clock: one task " << one << " kHz, two tasks " << two << " kHz");
    CHECK(one < 2200000);
    CHECK(two >= 2400000);
}

TEST_CASE("an idle x86 CPU in an MWAIT state is woken by the flag write, without an IPI, where a WFI or HLT CPU needs one",
          "[hardware][wake][idle]") {
    // perf bench sched pipe, both tasks unpinned: every wakeup goes to the other, idle CPU's
    // wake list. On the Xeon (intel_idle: every C-state is entered with MWAIT on the idle task's
    // flags, TIF_POLLING_NRFLAG set) set_nr_if_polling() succeeds and no IPI is sent; on the
    // Altra (WFI) and in the KVM guest (HLT) each wake is a call-function IPI.
    const auto kinds = [](const std::string& machine, const json& states) {
        json d = {{"machine", {{"preset", machine}}},
                  {"workload", {{"kind", "pipe"}, {"loops", 2000}}},
                  {"policies", {"plain"}},
                  {"run", {{"warmup_ops", 200}, {"seeds", {1}}}}};
        if (!states.is_null()) d["machine"]["profile"] = {{"idle_states", states}};
        const Scenario sc = parse_scenario(d, "mwait.json");
        const RunResult r = run_simulation(make_run_spec(sc, sc.cases.front(), sc.policies.front(), 1));
        return std::tuple{r.metrics.get(Metric::wakeups_remote), r.metrics.get(Metric::wakeups_ipi),
                          r.metrics.get(Metric::wakeups_poll), r.metrics.get(Metric::usec_per_op)};
    };
    const auto [xr, xi, xp, xus] = kinds("xeon-2s-16c32t", nullptr);
    const auto [ar, ai, ap, aus] = kinds("altra-80", nullptr);
    const auto [kr, ki, kp, kus] = kinds("kvm-2vcpu", nullptr);
    // The same Xeon with its C-states entered by HLT (as acpi_idle's C1 with the HLT entry method):
    // its own states, latencies and residencies, without MWAIT.
    std::ifstream xeon_file(machine_path("xeon-2s-16c32t"));
    json hlt = json::parse(xeon_file)["profile"]["idle_states"]["value"];
    for (auto& st : hlt) st.erase("mwait");
    const auto [hr, hi, hp, hus] = kinds("xeon-2s-16c32t", hlt);
    INFO("xeon: " << xr << " remote, " << xi << " IPIs, " << xp << " polled, " << xus << " us/op; HLT entry: " << hr << ", "
                  << hi << ", " << hp << ", " << hus << "; altra: " << ar << ", " << ai << ", " << ap << "; kvm: " << kr << ", "
                  << ki << ", " << kp);
    REQUIRE(xr >= 3000);
    CHECK(xi == 0);
    CHECK(xp >= 0.95 * xr);
    CHECK(ai >= 0.95 * ar);
    CHECK(ap == 0);
    CHECK(ki >= 0.95 * kr);
    CHECK(kp == 0);
    CHECK(hi >= 0.95 * hr);
    // The IPI (ipi_latency 800 ns) is slower than the flag write (poll_wake 200 ns): two wakes a round trip.
    CHECK(hus > xus + 2 * 0.5);
}

TEST_CASE("A timer wakes its sleeper once the CPU has left its idle state: a periodic task pays the state's exit",
          "[hardware][idle][timer]") {
    // T sleeps 5 ms and runs 10 us, 40 times, alone on CPU 1. hrtimer_wakeup() runs in the timer's
    // interrupt, which the idle CPU takes after the state's exit latency: each round lasts the
    // sleep, the work and the exit (and the switch), with a 300 us state as with a 1 us one less
    // 299 us. (The sleep is longer than a tick, so menu stops the tick: no tick interrupt comes
    // out of the state before the timer's.)
    auto round_us = [](const std::string& exit) {
        const json d = json::parse(R"({"machine": {"topology": {"name": "flat2", "cores_per_cluster": 2},
            "profile": {"base": "kvm-2vcpu", "cost_jitter_pct": 0, "idle_states": [
              {"name": "S", "exit_latency": ")" + exit + R"(", "target_residency": "10us"}]}},
          "workload": {"kind": "program", "tasks": [
            {"name": "T", "cpus": "1", "program": [{"loop": 40, "do": [{"sleep": "5ms"}, {"run": "10us"}, {"op": 1}]}]}]},
          "policies": ["plain"], "run": {"warmup_ops": 5, "seeds": [1]}})");
        const Scenario sc = parse_scenario(d, "timer.json");
        const RunResult r = run_simulation(make_run_spec(sc, sc.cases.front(), sc.policies.front(), 1));
        return r.metrics.get(Metric::sim_time_ns) / r.metrics.get(Metric::ops) / 1000.0;
    };
    const double shallow = round_us("1us"), deep = round_us("300us");
    INFO("a round: exit 1 us " << shallow << " us, exit 300 us " << deep << " us");
    CHECK(shallow == Approx(5011).margin(3));
    CHECK(deep - shallow == Approx(299).margin(2));
}

TEST_CASE("A wakeup sent to a HLT-idle CPU that a timer is waking still sends its IPI, an MWAIT-idle one none",
          "[hardware][idle][timer][ipi]") {
    // A sleeps 1 ms on CPU 1 from 0.3 ms (its fork woke CPU 1 from a state that takes 300 us to leave); B runs 1.4 ms on CPU 0 and
    // then wakes C, which waits on CPU 1. B's wakeup comes while CPU 1 is on its way out for A's
    // timer. Its wake list is empty and a HLT-idle task does not poll, so the kernel's waker sends
    // the IPI (__ttwu_queue_wakelist() -> send_call_function_single_ipi()) and pays its VM exit;
    // an MWAIT-idle CPU's polling flag takes a write instead.
    auto run = [](bool mwait) {
        const json d = json::parse(R"({"machine": {"topology": {"name": "flat2", "cores_per_cluster": 2},
            "profile": {"base": "kvm-2vcpu", "cost_jitter_pct": 0, "idle_states": [
              {"name": "S", "exit_latency": "300us", "target_residency": "10us", "mwait": )" +
                                   std::string(mwait ? "true" : "false") + R"(, "irq_enabled": )" +
                                   std::string(mwait ? "false" : "true") + R"(}]}},
          "workload": {"kind": "program", "channels": {"c": {"capacity": 0}}, "tasks": [
            {"name": "A", "cpus": "1", "program": [{"sleep": "1ms"}, {"run": "10us"}]},
            {"name": "B", "cpus": "0", "program": [{"run": "1400us"}, {"post": "c"}]},
            {"name": "C", "cpus": "1", "program": [{"wait": "c"}, {"run": "5us"}]}]},
          "policies": ["plain"], "run": {"seeds": [1]}})");
        const Scenario sc = parse_scenario(d, "timer-ipi.json");
        return run_simulation(make_run_spec(sc, sc.cases.front(), sc.policies.front(), 1));
    };
    const RunResult hlt = run(false), mwait = run(true);
    INFO("HLT: wakeups by IPI " << hlt.metrics.get(Metric::wakeups_ipi) << ", MWAIT: "
                                << mwait.metrics.get(Metric::wakeups_ipi) << " by IPI, "
                                << mwait.metrics.get(Metric::wakeups_poll) << " polled");
    REQUIRE(hlt.completed);
    REQUIRE(mwait.completed);
    CHECK(hlt.metrics.get(Metric::wakeups_ipi) == 1);
    CHECK(mwait.metrics.get(Metric::wakeups_ipi) == 0);
}
