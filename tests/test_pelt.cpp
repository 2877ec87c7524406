// PELT in the kernel's fixed point (kernel/pelt.h, kernel/sched/pelt.c): the decay table, the
// three-segment accumulation, and the signals a kernel developer expects from them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "fuse_test_util.h"
#include "kernel/pelt.h"
#include "sim_test_util.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

constexpr Time kPeriodNs = 1024 * 1024;  // one PELT period: 1024 units of 1024 ns

// A task's signal stepped in `step` ns increments over `span` ns, running or not.
void advance(Pelt& sa, Time& now, Time span, Time step, bool running) {
    for (Time end = now + span; now < end;) {
        now = std::min(end, now + step);
        pelt::update(sa, now, running ? 1 : 0, running ? 1 : 0, running, 1024, 1024);
    }
}

using testutil::task_named;

}  // namespace

TEST_CASE("PELT: the decay table is runnable_avg_yN_inv (y^32 = 1/2) and LOAD_AVG_MAX its series' limit", "[pelt]") {
    CHECK(pelt::kYNInv[0] == 0xffffffffu);
    CHECK(pelt::kYNInv[1] == 0xfa83b2dau);
    CHECK(pelt::kYNInv[16] == 0xb504f333u);  // y^16 = 1/sqrt(2)
    CHECK(pelt::kYNInv[31] == 0x82cd8698u);
    // LOAD_AVG_MAX: the fixed point of sum = sum * y + 1024 as decay_load computes it.
    uint64_t sum = 0;
    for (int i = 0; i < 2000; ++i) sum = pelt::decay_load(sum, 1) + 1024;
    CHECK(sum == pelt::kLoadAvgMax);
}

TEST_CASE("PELT: decay_load halves per 32 periods and drops to zero after 63 half-lives", "[pelt]") {
    const uint64_t v = 1u << 20;
    CHECK(pelt::decay_load(v, 0) == v - 1);  // y^0 is (2^32 - 1) / 2^32
    CHECK(pelt::decay_load(v, 32) == v / 2 - 1);
    CHECK(pelt::decay_load(v, 64) == v / 4 - 1);
    CHECK(pelt::decay_load(v, 16) == 741455);  // v / sqrt(2), rounded down
    CHECK(pelt::decay_load(UINT64_MAX, 32 * 63 + 1) == 0);
}

TEST_CASE("PELT: an always-running task's util_avg converges to 1024 and halves in 32 ms of sleep", "[pelt]") {
    Pelt sa;
    Time now = 0;
    advance(sa, now, 400 * kPeriodNs, 100000, true);  // 400 periods: past LOAD_AVG_MAX_N (345)
    CHECK(sa.util_avg >= 1000);
    CHECK(sa.util_avg <= 1024);
    // Nice 0 and always runnable: the same signal, up to the rounding of the two sums.
    CHECK(sa.load_avg >= sa.util_avg - 1);
    CHECK(sa.load_avg <= sa.util_avg + 1);
    const double full = sa.util_avg;
    advance(sa, now, 32 * kPeriodNs, 100000, false);
    CHECK(sa.util_avg >= full / 2 - 2);
    CHECK(sa.util_avg <= full / 2 + 2);
}

TEST_CASE("PELT: averages change only when a period ends, and one long update equals many short ones", "[pelt]") {
    Pelt a;
    Time now = 0;
    advance(a, now, 10 * kPeriodNs + 500 * 1024, 50000, true);
    const double u = a.util_avg;
    Time t = now;
    pelt::update(a, t + 100 * 1024, 1, 1, true, 1024, 1024);  // 100 more units inside the same period
    CHECK(a.util_avg == u);
    // The same 30 periods of running in one update (three segments) and in 1 us steps: equal up to
    // the rounding down of each step's decay (under 2%).
    Pelt b = a, c = a;
    Time tb = t + 100 * 1024, tc = tb;
    pelt::update(b, tb + 30 * kPeriodNs, 1, 1, true, 1024, 1024);
    advance(c, tc, 30 * kPeriodNs, 1024, true);
    CHECK(b.util_avg > u);
    CHECK(b.util_avg >= c.util_avg);
    CHECK(b.util_avg <= c.util_avg * 1.02);
}

TEST_CASE("PELT: a sleeper left queued by DELAY_DEQUEUE counts as load, not as runnable", "[pelt][delay_dequeue]") {
    // __update_load_avg_se() accumulates load while se->on_rq, which a delayed sleeper still is,
    // and runnable only while se_runnable(), which it is not; the CPU's load follows
    // cfs_rq->load.weight, which keeps the delayed entity's weight until it is dequeued. S (nice
    // 5) runs 3 ms at a time against a nice-0 hog on one CPU: it blocks far ahead of its share
    // and stays queued until the hog has caught up, most of its 10 ms sleep, so the share of
    // time it counts as load is about twice the share it is runnable. Without DELAY_DEQUEUE the
    // two are one signal.
    struct Shares {
        double load = 0, runnable = 0;  // of 1024
    };
    auto run = [](bool delay) {
        const json d = doc(R"({"machine": )" + flat(1) + R"(, "features": {"DELAY_DEQUEUE": )" +
                           (delay ? "true" : "false") + R"(}, "workload": {"kind": "program", "tasks": [
            {"name": "H", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
            {"name": "S", "cpus": "0", "nice": 5, "program": [{"loop": 0, "do": [{"run": "3ms"}, {"sleep": "10ms"}]}]}]},
            "policies": ["plain"], "run": {"duration": "400ms"}})");
        testutil::FuseSim sim(d);
        sim.run(300 * kNsPerMs);
        const Task& t = task_named(sim, "S");
        const Pelt p = sim.sched.task_pelt_now(t);
        return Shares{p.load_avg * 1024 / t.weight, p.runnable_avg};  // load_avg is weighted
    };
    const Shares delayed = run(true), plain = run(false);
    INFO("DELAY_DEQUEUE: load " << delayed.load << ", runnable " << delayed.runnable << "; off: load " << plain.load
                                << ", runnable " << plain.runnable);
    CHECK(delayed.load > 1.5 * delayed.runnable);
    CHECK(std::abs(plain.load - plain.runnable) < 10);
}

TEST_CASE("PELT: a wakee's wait on a remote wake list is neither runnable nor load time", "[pelt]") {
    // ttwu_queue_wakelist(): a task woken onto an idle CPU is enqueued by that CPU itself, after
    // the IPI and its exit from the idle state (C6 on the E5-2650 v2, 82 us). enqueue_entity()
    // updates the task's signals before it is on the runqueue, so that wait counts as sleep. S
    // runs 200 us each time W, on the other CPU, posts (every 5 ms): its runnable average is its
    // utilisation, as for any task that never waits for a busy CPU (both scaled by the clock).
    const json d = doc(R"({"machine": "e5-2650-2s", "workload": {"kind": "program", "channels": {"ch": {}}, "tasks": [
        {"name": "W", "cpus": "0", "program": [{"loop": 0, "do": [{"sleep": "5ms"}, {"post": "ch"}]}]},
        {"name": "S", "cpus": "1", "program": [{"loop": 0, "do": [{"wait": "ch"}, {"run": "200us"}]}]}]},
        "policies": ["plain"], "run": {"duration": "400ms"}})");
    testutil::FuseSim sim(d);
    sim.run(300 * kNsPerMs);
    const Task& t = task_named(sim, "S");
    const Pelt p = sim.sched.task_pelt_now(t);
    INFO("S: util_avg " << p.util_avg << ", runnable_avg " << p.runnable_avg << ", wakeups " << t.nr_wakeups);
    REQUIRE(t.nr_wakeups > 50);
    REQUIRE(p.util_avg > 10);
    CHECK(p.runnable_avg <= p.util_avg + 1);
}

TEST_CASE("util_est: a task that waits for its CPU keeps its estimate, alone it follows its utilisation down",
          "[pelt][util_est]") {
    // util_est_update() lowers the estimate by a quarter of its gap to util_avg at each sleep,
    // but not when the task "did not get all the CPU time it wanted" (runnable_avg more than 1%
    // above util_avg), not within 1%, and not while util_avg has not been recomputed since the
    // last update (UTIL_AVG_UNCHANGED). S runs 30 ms, then 1 ms in every 10: alone its estimate
    // falls with util_avg; sharing its CPU with a hog it waits at each wakeup and keeps what its
    // long run left.
    auto run = [](bool hog) {
        const std::string h = hog ? R"({"name": "H", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},)" : "";
        const json d = doc(R"({"machine": )" + flat(1) + R"(, "workload": {"kind": "program", "tasks": [)" + h + R"(
            {"name": "S", "cpus": "0", "program": [{"run": "30ms"}, {"loop": 0, "do": [{"sleep": "9ms"}, {"run": "1ms"}]}]}]},
            "policies": ["plain"], "run": {"duration": "400ms"}})");
        testutil::FuseSim sim(d);
        sim.run(300 * kNsPerMs);
        return sim.sched.task_pelt_now(task_named(sim, "S"));
    };
    const Pelt alone = run(false), shared = run(true);
    INFO("alone: util_avg " << alone.util_avg << ", util_est " << alone.util_est << "; with a hog: util_avg "
                            << shared.util_avg << ", runnable_avg " << shared.runnable_avg << ", util_est "
                            << shared.util_est);
    CHECK(alone.util_est < alone.util_avg + 30);
    CHECK(shared.runnable_avg > shared.util_avg + 10);
    CHECK(shared.util_est > shared.util_avg + 200);
}

TEST_CASE("runnable_boost: schedutil reads a CPU's runnable average from Linux 6.5 on, its utilisation alone before",
          "[pelt][schedutil]") {
    // "sched/fair, cpufreq: Introduce 'runnable boosting'" (Linux 6.5): cpu_util_cfs_boost() raises
    // util_avg to runnable_avg, so tasks queued behind each other ask for a higher clock. Two
    // tasks on CPU 0 wake together every 10 ms and run 2 ms each: one always waits for the other.
    auto run = [](bool boost) {
        const json d = doc(std::string(R"({"machine": {"preset": "e5-2650-2s", "profile": {"runnable_boost": )") +
                           (boost ? "true" : "false") + R"(}}, "workload": {"kind": "program", "tasks": [
            {"name": "A", "cpus": "0", "program": [{"loop": 0, "do": [{"sleep": "8ms"}, {"run": "2ms"}]}]},
            {"name": "B", "cpus": "0", "program": [{"loop": 0, "do": [{"sleep": "8ms"}, {"run": "2ms"}]}]}]},
            "policies": ["plain"], "run": {"duration": "400ms"}})");
        testutil::FuseSim sim(d);
        double boosted = 0, plain = 0;
        for (Time t = 200 * kNsPerMs; t < 300 * kNsPerMs; t += kNsPerMs) {
            sim.engine.run_until(t);
            boosted += sim.sched.cpu_util_cfs_boost(0);
            plain += sim.sched.cpu_util(0);
        }
        return std::pair{boosted / 100, plain / 100};
    };
    const auto on = run(true), off = run(false);
    INFO("6.5+: schedutil input " << on.first << " (cpu_util " << on.second << "); before: " << off.first << " ("
                                  << off.second << ")");
    CHECK(on.first > on.second * 1.1);
    CHECK(off.first == off.second);
}

TEST_CASE("PELT: task_util() and task_load() read a task's signals as last updated: a running task's change only at its ticks",
          "[pelt]") {
    // task_util() is READ_ONCE(p->se.avg.util_avg) and task_h_load() reads se.avg.load_avg: what the
    // entity's last update_load_avg() left (enqueue, pick, tick, sleep), not the signal grown to
    // now. H runs alone on its CPU, so only its ticks update it; the signal grown to now moves
    // many times between two ticks.
    const json d = doc(R"({"machine": )" + flat(1) + R"(, "workload": {"kind": "program", "tasks": [
        {"name": "H", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]}]},
        "policies": ["plain"], "run": {"duration": "400ms"}})");
    testutil::FuseSim sim(d);
    const Task& h = task_named(sim, "H");
    int util_changes = 0, load_changes = 0, projected_changes = 0, behind = 0;
    double util = -1, load = -1, projected = -1;
    for (Time t = 10 * kNsPerMs; t <= 110 * kNsPerMs; t += 100'000) {
        sim.engine.run_until(t);
        const double u = sim.sched.task_util(h), l = sim.sched.task_load(h), p = sim.sched.task_pelt_now(h).util_avg;
        util_changes += util >= 0 && u != util;
        load_changes += load >= 0 && l != load;
        projected_changes += projected >= 0 && p != projected;
        behind += u < p;
        util = u, load = l, projected = p;
    }
    const auto ticks = static_cast<int>(100 * kNsPerMs / sim.sched.tick_ns());
    INFO("ticks " << ticks << ": task_util() changed " << util_changes << " times, task_load() " << load_changes
                  << ", the signal grown to now " << projected_changes << "; samples behind it " << behind);
    CHECK(util_changes > 0);
    CHECK(util_changes <= ticks + 1);
    CHECK(load_changes <= ticks + 1);
    CHECK(projected_changes > util_changes + ticks);
    CHECK(behind > 0);
}

TEST_CASE("A task a wakeup moves at every wakeup keeps its utilisation, and the CPU it left keeps what it ran "
          "since its last period boundary",
          "[pelt][fuse]") {
    // fio over fuse-over-io-uring on two vCPUs, a queue per vCPU: each reply wake finds the ring
    // thread's vCPU busy and moves fio to the other, whose queue its next read then uses. The
    // kernel moves a waking task's signals without aging the time between its runqueue's last
    // update and its enqueue on the new CPU (remove_entity_load_avg()'s sync_entity_load_avg(),
    // attach_entity_load_avg() at the enqueue), so fio's util_avg stays where it was; and
    // update_cfs_rq_load_avg() takes the removed average times its divider off the sums, so the
    // CPU keeps the rest of fio's last stay until it decays. On the development VM fio kept
    // 380-450 while moving at most of its reads, and the vCPU carried 104-117 beyond its ring
    // thread and fio (docs/validation.md, "A moved task's signals"). Until 2026-12-05 the model
    // aged that time and fio lost a unit of util_avg a period: 468 at 0.1 s, 0 at 1.2 s.
    testutil::FuseSim sim(doc(R"({"machine": "kvm-2vcpu",
      "workload": {"kind": "fio", "rw": "randread", "bs": "4KiB", "number_ios": 100000000,
                   "transport": "io_uring", "teardown_watchdog": false},
      "policies": ["plain"]})"));
    sim.run(300'000'000);
    const Task& fio = testutil::task_named(sim, "fio-0");
    const double util_early = fio.pelt.util_avg;
    const uint64_t moves_early = fio.nr_migrations;
    sim.run(1'200'000'000);
    INFO("fio util_avg " << util_early << " at 0.3 s, " << fio.pelt.util_avg << " at 1.2 s; moves "
                         << fio.nr_migrations - moves_early << " in between");
    CHECK(fio.nr_migrations - moves_early > 20000);  // 23,560: at more than half of its reads
    // 473 at 0.3 s, 430 at 1.2 s: it drifts towards its CPU share (about 0.3) through the wakeups
    // that do not move it; aging the moves would take it down by a unit a period, 880 in all.
    CHECK(util_early > 300);
    CHECK(util_early - fio.pelt.util_avg < 100);
    // The vCPU fio last left: its util_avg beyond the tasks attached to it.
    const int left = 1 - fio.cpu;
    double attached = 0;
    for (int i = 0; i < sim.sched.nr_tasks(); ++i)
        if (sim.sched.task(i).cpu == left) attached += sim.sched.task(i).pelt.util_avg;
    const double rest = sim.sched.cpu_util(left) - attached;
    INFO("vCPU " << left << ": util " << sim.sched.cpu_util(left) << ", its tasks' " << attached);
    CHECK(rest > 20);  // 331 against 281
}
