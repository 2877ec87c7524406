// Energy-aware scheduling in the wake path (kernel/energy.cpp): find_energy_efficient_cpu() decides
// before wake_affine while the root domain is not overutilized, on a hand-built asymmetric machine
// with an energy model; the symmetric path runs when the root domain is overutilized, and EAS is
// off without schedutil or without an energy model (sched_is_eas_possible(), kernel/sched/topology.c).
#include <catch2/catch.hpp>

#include <string>

#include "hw/machine_profile.h"
#include "kernel/energy.h"
#include "fuse_test_util.h"
#include "sim_test_util.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

// Two littles (capacity 512, CPUs 0-1) and two bigs (1024, CPUs 2-3) in one cluster, with an
// energy model in which a little costs less per unit of work at every OPP (without one: the costs
// of a machine that has none). `profile` adds keys.
std::string asym4(const std::string& profile = "", bool energy_model = true) {
    const std::string em = R"("energy_model": [
        {"cpus": "0-1", "opps": [{"freq": "500MHz", "power_uw": 50000}, {"freq": "1GHz", "power_uw": 150000}]},
        {"cpus": "2-3", "opps": [{"freq": "1GHz", "power_uw": 300000}, {"freq": "2GHz", "power_uw": 1000000}]}])";
    return R"({"topology": {"name": "asym4", "cores_per_cluster": 4,
                 "core_types": [{"count": 2, "capacity": 512}, {"count": 2, "capacity": 1024}]},
               "profile": {"base": ")" +
           (energy_model ? "bl-4-3-1\", " + em : std::string("e5-2650-2s\"")) + R"(, "governor": "schedutil")" + profile + "}}";
}

// S forks on big CPU 2, runs 2 ms and then wakes `loops` times from W, pinned to big CPU 3,
// which sleeps `w_first_ms` and then posts every 5 ms; `hogs` adds tasks, `profile` machine keys.
// A new task starts at half its CPU's spare capacity (post_init_entity_util_avg()) and its
// util_est keeps that until a few short activations have lowered it: S is small only then.
json small_task(const std::string& hogs = "", int w_first_ms = 5, const std::string& profile = "",
                bool energy_model = true, int loops = 12) {
    const std::string n = std::to_string(loops);
    return doc(R"({"machine": )" + asym4(profile, energy_model) + R"(,
      "workload": {"kind": "program", "parent_cpu": 2, "channels": {"ch": {}},
        "tasks": [)" + hogs + R"(
          {"name": "S", "program": [{"run": "2ms"}, {"loop": )" + n + R"(, "do": [{"wait": "ch"}, {"run": "1ms"}]}]},
          {"name": "W", "cpus": "3", "program": [{"sleep": ")" + std::to_string(w_first_ms) + R"(ms"},
             {"loop": )" + n + R"(, "do": [{"post": "ch"}, {"sleep": "5ms"}]}]}]},
      "policies": ["plain"], "run": {"duration": "400ms"}})");
}

// The first wakeup of S that EAS places on a little CPU.
uint64_t first_little_wakeup(const json& d) {
    for (uint64_t w = 1; w <= 200; ++w) {
        const Outcome r = simulate(d, "", w);
        if (!r.explained()) return 0;
        if (r.wakee() == "S" && r.outcome() == SelectOutcome::eas && r.result_cpu() <= 1) return w;
    }
    return 0;
}

}  // namespace

TEST_CASE("EAS: a small task woken on a big CPU packs on a little CPU while the root domain is not overutilized",
          "[eas]") {
    const json d = small_task();
    // Fresh from fork S is not small: it starts at half of CPU 2's spare capacity and its util_est
    // keeps that, so its first wakeup stays on a big CPU.
    const Outcome first = simulate(d, "", nth_wakeup_of(d, "S"));
    REQUIRE(first.wakee() == "S");
    CHECK(first.outcome() == SelectOutcome::eas);
    CHECK(first.result_cpu() >= 2);
    const uint64_t w = first_little_wakeup(d);
    REQUIRE(w > 0);
    const Outcome r = simulate(d, "", w);
    REQUIRE(r.completed);
    REQUIRE(r.wakee() == "S");
    REQUIRE(r.prev() >= 2);  // S ran on a big CPU first
    const FeecEv* f = r.first<FeecEv>();
    REQUIRE(f);
    CHECK(f->overutilized_cpu == -1);
    CHECK(f->result == FeecResult::best);
    CHECK(f->best_cpu <= 1);
    CHECK(f->best_delta < f->prev_delta);  // the little adds less energy than prev
    CHECK(r.outcome() == SelectOutcome::eas);
    CHECK(r.result_cpu() <= 1);
    // EAS decides before wake_affine and select_idle_sibling, which never run.
    CHECK_FALSE(r.has<WantAffineEv>());
    CHECK_FALSE(r.has<WakeAffineEv>());
    CHECK_FALSE(r.has<SisBeginEv>());
    // Every wakeup of S (W's are pinned: one allowed CPU, no placement).
    CHECK(r.n(Metric::select_eas) == r.n(Metric::wakeups) - r.n(Metric::wakeups_no_placement) - r.n(Metric::select_pinned));
}

TEST_CASE("EAS: feec keeps prev when no candidate adds less energy", "[eas]") {
    // The wakeup after the one that moved S to a little: S sleeps there; the other little is as
    // idle (the same spare capacity, so no second candidate there) and a big costs more.
    const json d = small_task();
    const Outcome r = simulate(d, "", nth_wakeup_of(d, "S", 1, "", first_little_wakeup(d)));
    REQUIRE(r.wakee() == "S");
    REQUIRE(r.prev() <= 1);
    const FeecEv* f = r.first<FeecEv>();
    REQUIRE(f);
    CHECK(f->result == FeecResult::prev_kept);
    CHECK(f->prev_delta >= 0);
    if (f->best_cpu >= 0) CHECK(f->best_delta >= f->prev_delta);
    CHECK(r.outcome() == SelectOutcome::eas);
    CHECK(r.stays_on(r.prev()));
}

TEST_CASE("EAS: an overutilized root domain falls back to the symmetric wake path", "[eas]") {
    // Hogs on both littles run their utilisation past 80% of 512 before W's first post (150 ms).
    const std::string hogs = hog("h0", 0) + ", " + hog("h1", 1) + ",";
    const json d = small_task(hogs, 150);
    const Outcome r = simulate(d, "", nth_wakeup_of(d, "S"));
    REQUIRE(r.wakee() == "S");
    const FeecEv* f = r.first<FeecEv>();
    REQUIRE(f);
    CHECK(f->result == FeecResult::overutilized);
    CHECK(f->overutilized_cpu >= 0);
    CHECK(f->overutilized_cpu <= 1);
    CHECK(f->cpu == -1);
    CHECK(r.outcome() != SelectOutcome::eas);
    CHECK(r.has<WantAffineEv>());  // select_task_rq_fair went on to wake_wide and the domain walk
    CHECK(r.n(Metric::select_eas) == 0);
}

TEST_CASE("EAS is off with the performance governor or without an energy model", "[eas]") {
    SECTION("performance governor") {
        const json d = small_task("", 5, R"(, "governor": "performance")");
        const Outcome r = simulate(d, "", nth_wakeup_of(d, "S"));
        REQUIRE(r.wakee() == "S");
        CHECK_FALSE(r.has<FeecEv>());
        CHECK(r.outcome() != SelectOutcome::eas);
        CHECK(r.has<WantAffineEv>());
        CHECK(r.n(Metric::select_eas) == 0);
    }
    SECTION("no energy model") {
        const json d = small_task("", 5, "", false);
        const Outcome r = simulate(d, "", nth_wakeup_of(d, "S"));
        REQUIRE(r.wakee() == "S");
        CHECK_FALSE(r.has<FeecEv>());
        CHECK(r.outcome() != SelectOutcome::eas);
        CHECK(r.n(Metric::select_eas) == 0);
    }
}

TEST_CASE("EAS: em_cpu_energy prices the busy time at the first OPP whose performance covers the highest utilisation",
          "[eas]") {
    EmPerfDomain pd;
    pd.capacity = 1024;
    pd.nr_cpus = 2;
    pd.states = {{256, 100}, {512, 150}, {1024, 300}};
    CHECK(em_cpu_energy(pd, 200, 300, 1024) == Approx(100 * 300));
    CHECK(em_cpu_energy(pd, 256, 300, 1024) == Approx(100 * 300));
    CHECK(em_cpu_energy(pd, 257, 300, 1024) == Approx(150 * 300));
    CHECK(em_cpu_energy(pd, 2000, 300, 1024) == Approx(300 * 300));
    CHECK(em_cpu_energy(pd, 700, 300, 512) == Approx(150 * 300));  // capped at the allowed capacity
    CHECK(em_cpu_energy(pd, 700, 0, 1024) == 0);
}

TEST_CASE("EAS: bl-4-3-1's energy model is built as the kernel builds it from a device tree", "[eas][machines]") {
    const MachineFile m = load_machine_file(machine_path("bl-4-3-1"));
    const auto& em = m.profile.energy_model;
    REQUIRE(em.size() == 3);
    CHECK(em[0].cpu_ids == std::vector<int>{0, 1, 2, 3});
    CHECK(em[1].cpu_ids == std::vector<int>{4, 5, 6});
    CHECK(em[2].cpu_ids == std::vector<int>{7});
    // _get_dt_power(): dynamic-power-coefficient x mV^2 x MHz / 10^6 uW.
    REQUIRE(!em[0].opps.empty());
    CHECK(em[0].opps[0].power_uw == 205LL * 560 * 560 * 300 / 1000000);
    for (const auto& pd : em)
        for (size_t i = 1; i < pd.opps.size(); ++i) {
            CHECK(pd.opps[i].khz > pd.opps[i - 1].khz);
            CHECK(pd.opps[i].power_uw > pd.opps[i - 1].power_uw);
        }
    CHECK(energy_model_mismatch(m.profile, m.topo).empty());
    CHECK(!m.profile.source_of("energy_model").empty());
}

namespace {
// sm8250: A, pinned to mid CPU 4, runs 30 ms every 100 ms; B (mid CPUs 5-6 or the prime, 7) runs
// 200 us every 10 ms, each time 3 ms into one of A's runs when the period lines up.
json mid_busy_small_wakee() {
    return doc(R"({"machine": "sm8250",
      "workload": {"kind": "program", "timers": {"ta": {"mode": "absolute"}, "tb": {"mode": "absolute"}},
        "tasks": [{"name": "A", "cpus": "4", "program": [{"loop": 0, "do": [{"run": "30ms"}, {"timer": "ta", "period": "100ms"}]}]},
                  {"name": "B", "cpus": "5-7", "delay": "3ms",
                   "program": [{"loop": 0, "do": [{"run": "200us"}, {"timer": "tb", "period": "10ms"}]}]}]},
      "policies": ["plain"], "run": {"duration": "350ms"}})");
}

// The first select_task_rq call for `comm` made at or after `t`.
Outcome first_wakeup_after(const json& d, const std::string& comm, Time t) {
    for (uint64_t w = 1; w <= 1000; ++w) {
        Outcome r = simulate(d, "", w);
        if (!r.explained()) break;
        if (r.wakee() == comm && r.at >= t) return r;
    }
    return Outcome{};
}
}  // namespace

TEST_CASE("EAS: feec prices a domain at the OPP its runqueues' util_est asks for: a small wakee leaves a mid CPU for the prime while a task that slept long runs on the mid cluster",
          "[eas]") {
    // 3 ms into A's third and fourth runs A's util_avg has decayed over its 70 ms sleep, but its
    // util_est has not: cpu_util(cpu, p, dst, 1) of CPU 4 (its runqueue's util_est) sets the mid
    // domain's OPP in eenv_pd_max_util(), so B on a mid CPU costs more than on the prime. Read from
    // util_avg alone (wakesim before 2026-12-05) the mid CPU looked cheaper and B stayed there.
    const json d = mid_busy_small_wakee();
    for (const Time t : {203 * kNsPerMs, 303 * kNsPerMs}) {
        const Outcome r = first_wakeup_after(d, "B", t);
        REQUIRE(r.wakee() == "B");
        REQUIRE(r.at < t + 5 * kNsPerMs);
        const FeecEv* f = r.first<FeecEv>();
        REQUIRE(f);
        CHECK(r.outcome() == SelectOutcome::eas);
        CHECK(r.result_cpu() == 7);
        if (r.prev() != 7) {
            CHECK(f->result == FeecResult::best);
            CHECK(f->best_delta < f->prev_delta);
        }
    }
}

TEST_CASE("EAS: while no CPU is overutilized the load balancer leaves EAS's placement alone and a hog on the biggest CPU it may use is no misfit",
          "[eas][balance]") {
    // Eight small periodic tasks: EAS places every wakeup and nothing is overutilized, so
    // sched_balance_find_src_group() finds every domain balanced (v6.19: !is_rd_overutilized() with
    // a perf domain) and no balance moves a task, though the balancer runs. Measured after 300 ms:
    // a new task starts at half its CPU's capacity and its util_est comes down by a quarter of the
    // excess at each dequeue, so two tasks that feec stacks on a little CPU early on (it reads idle
    // CPUs' utilisation as last updated) overutilize it.
    const json small = doc(R"({"machine": "sm8250",
      "workload": {"kind": "program", "timers": {"t": {"mode": "absolute"}},
        "tasks": [{"name": "p", "count": 8, "program": [{"loop": 0, "do": [{"run": "300us"}, {"timer": "t", "period": "16ms"}]}]}]},
      "policies": ["plain"], "run": {"warmup": "300ms", "duration": "1s"}})");
    const Outcome s = simulate(small);
    CHECK(s.n(Metric::balance_runs) > 0);
    CHECK(s.n(Metric::migrations_balance) == 0);
    CHECK(s.n(Metric::migrations_newidle) == 0);
    CHECK(s.n(Metric::migrations_active) == 0);
    CHECK(s.n(Metric::select_eas) > 0);
    // A hog allowed on CPUs 4-7 runs on the prime (CPU 7), the biggest it may use: no misfit
    // (update_misfit_status(): capacity == p->max_allowed_capacity), so its tick kicks no nohz
    // balance (an asymmetric machine kicks only for a misfit task) and only CPU 7's own periodic
    // balance runs.
    const Outcome top = simulate(doc(R"({"machine": "sm8250",
      "workload": {"kind": "program", "parent_cpu": 4,
        "tasks": [{"name": "hog", "cpus": "4-7", "program": [{"loop": 0, "do": [{"run": "10ms"}]}]}]},
      "policies": ["plain"], "run": {"warmup": "200ms", "duration": "1s"}})"));
    CHECK(top.util(7) > 0.99);
    CHECK(top.n(Metric::balance_runs) < 10);
    CHECK(top.n(Metric::migrations) == 0);
}

TEST_CASE("EAS: rd->overutilized stays set after no CPU is overutilized, until a root-level load balance clears it",
          "[eas][balance]") {
    // H on little CPU 0 runs 30 ms (past 80% of its 512) and sleeps 100 ms, again and again; S and
    // W (small_task()) wake now and then on the bigs. The flag is set by an enqueue or busy tick
    // that finds a CPU overutilized (check_update_overutilized_status()); only update_sd_lb_stats()
    // at the root level clears it. So there are instants where the flag is set and every CPU fits,
    // and the flag does come down.
    const std::string h = R"({"name": "H", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "30ms"}, {"sleep": "100ms"}]}]},)";
    testutil::FuseSim sim(small_task(h, 5, "", true, 60));
    const testutil::FlagLag n = testutil::sample_flag_lag(
        sim, kNsPerMs, 390 * kNsPerMs, 50'000, [&] { return sim.sched.rd_overutilized_cpu() >= 0; },
        [&] {
            bool any = false;
            for (int c = 0; c < 4; ++c) any = any || sim.sched.cpu_overutilized(c);
            return any;
        });
    INFO("samples with the flag set " << n.set << ", of them with every CPU fitting " << n.set_without_state
                                      << "; clears after a set " << n.cleared_after_set);
    CHECK(n.set > 0);
    CHECK(n.set_without_state > 0);
    CHECK(n.cleared_after_set > 0);
}

TEST_CASE("Misfit: a task that outgrows its little CPU between two ticks is marked misfit at the next tick, and then moves up",
          "[eas][balance]") {
    // update_misfit_status() sets rq->misfit_task_load at the pick and at task_tick_fair() only;
    // the balancer and the nohz kick read it as set. H first runs 1 ms every 21 ms, which EAS
    // places on a little CPU, then 300 ms at a time: on the little CPU it grows past 80% of 512.
    testutil::FuseSim sim(doc(R"({"machine": )" + asym4() + R"(, "workload": {"kind": "program", "parent_cpu": 0,
        "tasks": [{"name": "H", "program": [{"loop": 20, "do": [{"run": "1ms"}, {"sleep": "20ms"}]},
                                           {"loop": 0, "do": [{"run": "300ms"}, {"sleep": "400ms"}]}]}]},
        "policies": ["plain"], "run": {"duration": "2s"}})"));
    const Task* hp = &testutil::task_named(sim, "H");
    int outgrown = 0, unmarked = 0, marked = 0, marked_on_big = 0, ran_big_after_little = 0;
    int last_cpu = -1;
    for (Time t = kNsPerMs; t <= 1900 * kNsPerMs; t += 20'000) {
        sim.engine.run_until(t);
        for (int c = 0; c < 4; ++c) {
            if (sim.sched.misfit_task_load(c) > 0) {
                ++marked;
                marked_on_big += c >= 2;
            }
            if (sim.sched.current(c) != hp) continue;
            if (c >= 2 && last_cpu >= 0 && last_cpu < 2) ++ran_big_after_little;
            last_cpu = c;
            // The signal grown to now (what the kernel's next update would leave) against 80% of c.
            const double now_util = std::max(sim.sched.task_pelt_now(*hp).util_avg, hp->pelt.util_est);
            if (c < 2 && now_util * 1280 >= sim.sched.capacity_of(c) * 1024.0) {
                ++outgrown;
                unmarked += sim.sched.misfit_task_load(c) == 0;
            }
        }
    }
    INFO("samples with H past its little CPU " << outgrown << ", of them not yet marked " << unmarked
                                               << "; samples with a CPU marked " << marked << " (on a big one "
                                               << marked_on_big << "); moves up " << ran_big_after_little);
    CHECK(outgrown > 0);
    CHECK(unmarked > 0);
    CHECK(unmarked < outgrown);
    CHECK(marked > 0);
    CHECK(marked_on_big == 0);  // a big CPU is H's biggest: capacity == max_allowed_capacity
    CHECK(ran_big_after_little > 0);
}
