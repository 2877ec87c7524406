// Fair group scheduling (CONFIG_FAIR_GROUP_SCHED), one level deep as autogroups are: a group's
// tasks queue on its own runqueue per CPU, and the group competes in the root runqueue as one
// entity whose weight is its shares split over the CPUs (calc_group_shares()).
#include <catch2/catch.hpp>

#include <iomanip>
#include <string>
#include <utility>
#include <vector>

#include "fuse_test_util.h"
#include "sim_test_util.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

// A program task that computes forever on `cpu`, with a role and a group.
std::string grouped_hog(const std::string& name, int cpu, const std::string& role, const std::string& group) {
    return R"({"name": ")" + name + R"(", "cpus": ")" + std::to_string(cpu) + R"(", "role": ")" + role + R"(")" +
           (group.empty() ? "" : R"(, "group": ")" + group + R"(")") +
           R"(, "program": [{"loop": 0, "do": [{"run": "1ms"}]}]})";
}

// The requesters' share of the CPU time the requesters and servers got.
double requester_share(const Outcome& o) {
    const double r = o.m.get(Metric::cpu_time_requester_ns), s = o.m.get(Metric::cpu_time_server_ns);
    return r / (r + s);
}

// One CPU: a lone hog ("requester") against four hogs ("server"), each side in a group of its own.
json lone_against_four(bool fair, int make_weight) {
    const std::string groups =
        fair ? R"({"solo": {"fair_group": true}, "make": {"fair_group": true)" +
                   (make_weight != 100 ? R"(, "cpu_weight": )" + std::to_string(make_weight) : std::string()) + "}}"
             : R"({"solo": {}, "make": {}})";
    std::string tasks = grouped_hog("editor", 0, "requester", "solo");
    for (int i = 0; i < 4; ++i) tasks += ", " + grouped_hog("cc" + std::to_string(i), 0, "server", "make");
    return doc(R"({"machine": )" + flat(1) + R"(, "groups": )" + groups +
               R"(, "workload": {"kind": "program", "tasks": [)" + tasks +
               R"(]}, "policies": ["plain"], "run": {"duration": "400ms"}})");
}

}  // namespace

TEST_CASE("Autogroups: a lone task gets half the CPU against a group of four hogs, a fifth without groups",
          "[eevdf][groups]") {
    // The autogroup patch's showcase ("sched: automated per session task groups", Mike Galbraith,
    // 2010): a `make -j4` in one session no longer takes four fifths of the CPU from the editor in
    // another; the root runqueue holds two entities of equal weight.
    const double flat_share = requester_share(simulate(lone_against_four(false, 100)));
    const double grouped = requester_share(simulate(lone_against_four(true, 100)));
    INFO("editor's share: flat " << flat_share << ", groups " << grouped);
    CHECK(flat_share == Approx(0.2).margin(0.02));
    CHECK(grouped == Approx(0.5).margin(0.02));
    // cpu.weight 300 for the build: 1024 against 3072, a quarter for the editor.
    CHECK(requester_share(simulate(lone_against_four(true, 300))) == Approx(0.25).margin(0.02));
}

TEST_CASE("A group's shares are split over the CPUs its tasks are queued on", "[eevdf][groups]") {
    // Two CPUs, each with one root hog and one hog of group G: G's 1024 shares split into 512 per
    // CPU (calc_group_shares()), so on each CPU the root hog (1024) gets two thirds. Without the
    // group, halves.
    auto run = [](bool fair) {
        const std::string tasks = grouped_hog("root0", 0, "requester", "") + ", " +
                                  grouped_hog("root1", 1, "requester", "") + ", " +
                                  grouped_hog("g0", 0, "server", "G") + ", " + grouped_hog("g1", 1, "server", "G");
        return requester_share(simulate(doc(R"({"machine": )" + flat(2) + R"(, "groups": {"G": {"fair_group": )" +
                                            (fair ? "true" : "false") +
                                            R"(}}, "workload": {"kind": "program", "tasks": [)" + tasks +
                                            R"(]}, "policies": ["plain"], "run": {"duration": "400ms"}})")));
    };
    CHECK(run(false) == Approx(0.5).margin(0.02));
    CHECK(run(true) == Approx(2.0 / 3).margin(0.02));
}

TEST_CASE("fio in its own autogroup is never left queued behind its ring thread: every reply wakeup places it",
          "[eevdf][groups][fuse]") {
    // fio's psync reads over fuse-over-io-uring on the 2-vCPU VM, a queue per vCPU. When fio blocks
    // behind the ring thread that serves it, it has run more than its share: with both in one
    // runqueue DELAY_DEQUEUE leaves it queued there, and the reply wakeup only requeues it
    // (ttwu_runnable()). Alone in its group (fio calls setsid(), so with autogroups it is), its lag
    // there is zero: it is dequeued, the group's entity may be the one left delayed, and each
    // reply wakeup goes through select_idle_sibling(), which finds the ring thread's CPU busy and
    // moves fio to the idle vCPU: one migration per read (the AMD-host VM measured 0.92; bpftrace
    // saw 29-325 of 176,000-741,000 fio sleeps delayed).
    auto run = [](bool groups) {
        return simulate(doc(std::string(R"({"machine": "kvm-2vcpu",)") +
                            (groups ? R"("groups": {"fio": {"fair_group": true}, "server": {"fair_group": true}},)"
                                    : "") +
                            R"("workload": {"kind": "fio", "number_ios": 20000, "transport": "io_uring")" +
                            (groups ? R"(, "group": "fio", "server_group": "server")" : "") +
                            R"(}, "policies": ["plain"], "run": {"warmup_ops": 2000}})"));
    };
    const Outcome flat_rq = run(false), grouped = run(true);
    const double reads = 18000;
    INFO("no_placement per read: flat " << flat_rq.n(Metric::wakeups_no_placement) / reads << ", groups "
                                        << grouped.n(Metric::wakeups_no_placement) / reads);
    CHECK(flat_rq.n(Metric::wakeups_no_placement) > reads / 4);
    CHECK(grouped.n(Metric::wakeups_no_placement) == 0);
    // fio changes CPU, and so io-uring queue, at every read; with one runqueue only on about half.
    CHECK(grouped.n(Metric::migrations_requester) == Approx(reads).epsilon(0.02));
    CHECK(grouped.n(Metric::fuse_queue_changes) == Approx(reads).epsilon(0.02));
    CHECK(flat_rq.n(Metric::migrations_requester) < reads * 0.7);
}


TEST_CASE("Task groups keep the hierarchy consistent through sleeps, wakeups, preemption, balancing and exits",
          "[eevdf][groups][invariants]") {
    // Four CPUs; two groups of different weights and a root task, request/reply pairs across and
    // within groups, nice values (unequal weights inside a group), a SCHED_IDLE member, tasks that
    // exit, and more runnable tasks than CPUs so the balancer moves group members. At every check:
    // each queued task on its group's runqueue, each group entity in the root exactly while its
    // runqueue has tasks there (or, delayed, with none), the queues' weights summed.
    for (const bool delay : {true, false}) {
        INFO("DELAY_DEQUEUE " << delay);
        const json d = doc(std::string(R"({"machine": )") + flat(4) + R"(, "features": {"DELAY_DEQUEUE": )" +
                           (delay ? "true" : "false") + R"(},
          "groups": {"a": {"fair_group": true}, "b": {"fair_group": true, "cpu_weight": 250}},
          "workload": {"kind": "program",
            "channels": {"req": {}, "rep": {}, "q2": {}, "r2": {}},
            "tasks": [
              {"name": "client", "group": "a", "program": [{"loop": 3000, "do": [{"run": "7us"}, {"post": "req"}, {"wait": "rep"}]}]},
              {"name": "server", "group": "b", "program": [{"loop": 3000, "do": [{"wait": "req"}, {"run": "11us"}, {"post": "rep"}]}]},
              {"name": "c2", "group": "b", "nice": 5, "program": [{"loop": 2000, "do": [{"run": "13us"}, {"post": "q2"}, {"wait": "r2"}, {"sleep": "20us"}]}]},
              {"name": "s2", "group": "b", "nice": -3, "program": [{"loop": 2000, "do": [{"wait": "q2"}, {"run": "5us"}, {"post": "r2"}]}]},
              {"name": "burst", "group": "a", "count": 3, "program": [{"loop": 200, "do": [{"run": "300us"}, {"sleep": "150us"}]}]},
              {"name": "lazy", "group": "a", "policy": "idle", "program": [{"loop": 100, "do": [{"run": "500us"}, {"sleep": "1ms"}]}]},
              {"name": "rooted", "count": 2, "program": [{"loop": 150, "do": [{"run": "400us"}, {"sleep": "90us"}]}]}
            ]},
          "policies": ["plain"]})");
        FuseSim sim(d);
        int checks = 0;
        for (Time t = 20000; t <= 2 * kNsPerSec && !sim.engine.stopped(); t += 20000, ++checks) {
            sim.engine.run_until(t);
            sim.sched.check_invariants();
        }
        CHECK(sim.engine.stopped());  // every foreground task finished
        CHECK(checks > 1000);
        CHECK(sim.driver.all_exited());
    }
}

namespace {

// T runs 20 ms on CPU 1 (a blocker keeps CPU 0 busy while it forks), sleeps 2 ms, and wakes to
// find a hog on CPU 1: select_idle_sibling() moves it to CPU 0. Samples CPU 1's utilisation as
// T is switched in on CPU 0 and as T finishes there, 60 ms later.
struct LeftBehind {
    double at_move = -1, later = -1, t_util = 0;
};

class LeftBehindProbe final : public SchedObserver {
public:
    explicit LeftBehindProbe(const Scheduler& s) : sched_(s) {}
    uint32_t interests() const override { return kObsSwitch; }
    void sched_switch(int cpu, const Task* prev, char, const Task* next) override {
        if (cpu != 0) return;
        if (next && next->comm == "T" && r.at_move < 0 && sched_.now() > 20'000'000) {
            r.at_move = sched_.cpu_util(1);
            r.t_util = next->pelt.util_avg;
        }
        if (prev && prev->comm == "T" && prev->state == TaskState::exited) r.later = sched_.cpu_util(1);
    }
    LeftBehind r;

private:
    const Scheduler& sched_;
};

LeftBehind left_behind(bool grouped, const char* hog = "100ms") {
    const json d = doc(R"({"machine": )" + flat(2) + R"(, "groups": {"g": {"fair_group": )" + (grouped ? "true" : "false") + R"(}},
      "workload": {"kind": "program", "tasks": [
        {"name": "B", "cpus": "0", "program": [{"run": "3ms"}]},
        {"name": "T", "group": "g", "program": [{"run": "20ms"}, {"sleep": "2ms"}, {"run": "60ms"}]},
        {"name": "H", "cpus": "1", "delay": "21ms", "program": [{"run": ")" + std::string(hog) + R"("}]}]},
      "policies": ["plain"], "run": {"duration": "120ms"}})");
    testutil::FuseSim sim(d);
    LeftBehindProbe probe(sim.sched);
    sim.sched.set_observer(&probe);
    sim.run(120'000'000);
    return probe.r;
}

}  // namespace

TEST_CASE("A task in a task group leaves its utilisation on the CPU it left until that CPU's blocked averages are updated",
          "[pelt][groups]") {
    // remove_entity_load_avg() queues a migrating task's signals on its runqueue there. For a
    // task in a group that is the group's runqueue, which nothing on that CPU updates until
    // update_blocked_averages() (the CPU's periodic or newidle balance, or the nohz idle
    // balancer's stats pass): until then the CPU still counts it, and with the utilisation of
    // the CPU the task now runs on, SIS_UTIL's summed utilisation counts it twice. A task of the
    // root runqueue leaves with the root's next update, which the wakeup's enqueue makes.
    const LeftBehind g = left_behind(true), root = left_behind(false);
    INFO("grouped: CPU 1 at the move " << g.at_move << ", later " << g.later << "; T " << g.t_util
                                       << "; root: " << root.at_move << ", " << root.later);
    REQUIRE(g.at_move >= 0);
    REQUIRE(root.at_move >= 0);
    CHECK(g.t_util > 200);
    CHECK(g.at_move > root.at_move + 0.8 * g.t_util);
    // By then CPU 1's busy hog has balanced (every 32 ms) and taken T's contribution off.
    REQUIRE(g.later >= 0);
    CHECK(std::abs(g.later - root.later) < 20);
    // With the hog gone after 2 ms CPU 1 idles with its tick stopped; the nohz idle balancer's
    // stats pass (NOHZ_STATS_KICK from CPU 0's tick, at most every 32 ms) takes it off there.
    const LeftBehind gi = left_behind(true, "2ms"), ri = left_behind(false, "2ms");
    INFO("hog for 2 ms: grouped " << gi.at_move << ", later " << gi.later << "; root " << ri.at_move << ", " << ri.later);
    CHECK(gi.at_move > ri.at_move + 0.8 * gi.t_util);
    CHECK(std::abs(gi.later - ri.later) < 20);
}

TEST_CASE("An idle CPU keeps the utilisation its last task left until the nohz idle balancer's stats pass updates it",
          "[pelt]") {
    // cpu_util() reads cfs_rq->avg as last updated. T runs 20 ms on CPU 1 and sleeps; B keeps CPU 0
    // busy, and its tick kicks the nohz idle balancer's stats pass (NOHZ_STATS_KICK) at most every
    // LOAD_AVG_PERIOD (32 ms) while nohz.has_blocked is set: only then does CPU 1's signal decay.
    const json d = doc(R"({"machine": )" + flat(2) + R"(, "workload": {"kind": "program", "tasks": [
        {"name": "B", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
        {"name": "T", "cpus": "1", "program": [{"run": "20ms"}, {"sleep": "1s"}]}]},
        "policies": ["plain"], "run": {"duration": "200ms"}})");
    testutil::FuseSim sim(d);
    std::vector<std::pair<Time, double>> changes;  // (time, CPU 1's utilisation) at each change
    for (Time t = 22 * kNsPerMs; t <= 190 * kNsPerMs; t += 100'000) {
        sim.engine.run_until(t);
        const double u = sim.sched.cpu_util(1);
        if (changes.empty() || u != changes.back().second) changes.emplace_back(t, u);
    }
    INFO("CPU 1's utilisation changed " << changes.size() << " times; first " << changes.front().second << ", last "
                                        << changes.back().second);
    REQUIRE(changes.front().second > 500);  // what T left
    // A few steps, not one per sample: one per stats pass, each at least 32 ms after the last.
    CHECK(changes.size() >= 4);
    CHECK(changes.size() <= 7);
    for (size_t i = 2; i < changes.size(); ++i) CHECK(changes[i].first - changes[i - 1].first >= 32 * kNsPerMs);
    // Over 170 ms the steps add up to the decay (y^170, about 1/40).
    CHECK(changes.back().second < changes.front().second / 10);
}

TEST_CASE("Linux 5.8 to 6.12 lose a nohz balance kick to an MWAIT-idle CPU, so its utilisation does not decay there",
          "[pelt][nohz][hardware]") {
    // As above, CPU 1 idles with what T left while B's tick kicks it for the stats pass. An MWAIT
    // state keeps TIF_POLLING_NRFLAG set, so the kick only writes need_resched; before "sched/core:
    // Remove the unnecessary need_resched() check in nohz_csd_func()" (6.13) the CPU then raised no
    // SCHED_SOFTIRQ and went back to idle. An HLT state takes a real IPI, and the kick works.
    auto util_left = [](bool mwait, bool balances) {
        const json d = doc(std::string(R"({"machine": {"topology": {"name": "flat2", "cores_per_cluster": 2},
            "profile": {"base": "kvm-2vcpu", "polled_ilb_balances": )") + (balances ? "true" : "false") +
                           R"(, "idle_states": [{"name": "C1", "exit_latency": "2us", "target_residency": "4us", "mwait": )" +
                           (mwait ? "true" : "false") + R"(}]}},
            "workload": {"kind": "program", "tasks": [
                {"name": "B", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
                {"name": "T", "cpus": "1", "program": [{"run": "20ms"}, {"sleep": "1s"}]}]},
            "policies": ["plain"], "run": {"duration": "200ms"}})");
        testutil::FuseSim sim(d);
        sim.engine.run_until(22 * kNsPerMs);
        const double at_sleep = sim.sched.cpu_util(1);
        sim.engine.run_until(190 * kNsPerMs);
        return std::pair{at_sleep, sim.sched.cpu_util(1)};
    };
    const auto [mwait_fixed0, mwait_fixed] = util_left(true, true);
    const auto [mwait_lost0, mwait_lost] = util_left(true, false);
    const auto [hlt_old0, hlt_old] = util_left(false, false);
    INFO("CPU 1's utilisation at 22 ms and 190 ms: MWAIT, 6.13 " << mwait_fixed0 << " -> " << mwait_fixed << "; MWAIT, 6.12 "
                                                                  << mwait_lost0 << " -> " << mwait_lost << "; HLT, 6.12 "
                                                                  << hlt_old0 << " -> " << hlt_old);
    REQUIRE(mwait_lost0 > 500);
    CHECK(mwait_fixed < mwait_fixed0 / 10);
    CHECK(mwait_lost == mwait_lost0);  // no stats pass ever ran on it
    CHECK(hlt_old < hlt_old0 / 10);
}

TEST_CASE("A delayed group entity is requeued against the running entity as last updated, so a ring thread "
          "preempts fio when fio ran longer", "[eevdf][groups][fuse]") {
    // fio (io_uring engine, iodepth 4) and its ring thread on one vCPU, each in an autogroup. The
    // ring thread sleeps past V, so its group entity stays delayed on the root; fio's next submit
    // requeues it (requeue_delayed_entity(), no update_curr() at the root first) against fio's
    // entity as of fio's switch-in, and the wakeup check's update_curr() then charges fio all it
    // ran since. Measured on the development VM (bpftrace, docs/validation.md): 24-26% of those
    // wakes preempt fio, 0.07-0.08 per read, every time with fio's group entity ineligible; the
    // ring thread ran 3.10 us after its reply's wake, fio 3.31 us before its first submit. Here fio
    // reaps its four completions at once (iodepth_batch_complete_max 4, not fio's default 1), so
    // that its run before its first submit is the four reaps and the submit.
    auto run = [](const std::string& tail) {
        return simulate(doc(R"({"machine": "kvm-2vcpu-spr",
            "groups": {"fio": {"fair_group": true}, "server": {"fair_group": true}},
            "workload": {"kind": "fio", "number_ios": 20000, "transport": "io_uring", "ioengine": "io_uring",
                         "iodepth": 4, "iodepth_batch_complete_max": 4, "cpus": "0", "group": "fio",
                         "server_group": "server", "uring_enter_tail": ")" + tail + R"("},
            "policies": ["plain"], "run": {"warmup_ops": 2000}})"));
    };
    // The ring thread's tail after its wake of fio (three commits and the enter tail) against
    // fio's run up to its first submit: longer with the default costs, shorter without the tail.
    const Outcome longer = run("1500ns"), shorter = run("0ns");
    const double reads = 18000;
    INFO("preemptions per read: ring tail longer " << longer.n(Metric::preemptions) / reads << ", shorter "
                                                   << shorter.n(Metric::preemptions) / reads);
    CHECK(longer.n(Metric::preemptions) < reads / 100);
    CHECK(shorter.n(Metric::preemptions) > reads * 0.05);
    CHECK(shorter.n(Metric::preemptions) < reads * 0.2);
    // Preempted after one submit, the ring thread serves smaller rounds (the kernel: 2.4 reads).
    CHECK(longer.m.get(Metric::fuse_ring_batch_mean) > 3.9);
    CHECK(shorter.m.get(Metric::fuse_ring_batch_mean) < 3.5);
}

TEST_CASE("A group's shares on a CPU follow its load averages: a task that went to sleep on another CPU still "
          "holds part of the group's weight there while its load decays",
          "[eevdf][groups]") {
    // calc_group_shares(): a runqueue's share is tg->shares x its load over tg->load_avg, the sum
    // of every CPU's load average as last published (update_tg_load_avg()). CPU 0 has a root hog
    // against a hog of group G; G's second task hogs CPU 1 for 100 ms, then sleeps. While both
    // run, G's entity on CPU 0 weighs 512 and the root hog gets two thirds; after the sleep, CPU
    // 1's blocked load decays (half-life 32 ms) and keeps G's entity on CPU 0 below 1024 for
    // tens of milliseconds, so over 200 ms the root hog gets clearly more than if the departed
    // task's weight left at once (0.60 here).
    const std::string sleeper = R"({"name": "g1", "cpus": "1", "group": "G",
        "program": [{"run": "100ms"}, {"sleep": "10s"}]})";
    const std::string tasks = grouped_hog("root0", 0, "requester", "") + ", " + grouped_hog("g0", 0, "server", "G") +
                              ", " + sleeper;
    const Outcome o = simulate(doc(R"({"machine": )" + flat(2) + R"(, "groups": {"G": {"fair_group": true}},
        "workload": {"kind": "program", "tasks": [)" + tasks + R"(]}, "policies": ["plain"],
        "run": {"duration": "200ms"}})"));
    const double share = requester_share(o);
    INFO("root hog's share of CPU 0: " << std::setprecision(4) << share);
    CHECK(share > 0.62);
    CHECK(share < 2.0 / 3);
}

namespace {

// Four hogs of group G pinned to CPU 0, one root hog on CPU 1: CPU 0's load, and the load the
// balancer weighs a G hog and the root hog by (task_h_load()), after 300 ms.
struct HLoads {
    double cpu0 = 0, cpu1 = 0, g_task = 0, root_task = 0;
};

HLoads h_loads(bool fair) {
    std::string tasks = grouped_hog("root", 1, "requester", "");
    for (int i = 0; i < 4; ++i) tasks += ", " + grouped_hog("g" + std::to_string(i), 0, "server", "G");
    FuseSim sim(doc(R"({"machine": )" + flat(2) + R"(, "groups": {"G": {"fair_group": )" + (fair ? "true" : "false") +
                    R"(}}, "workload": {"kind": "program", "tasks": [)" + tasks +
                    R"(]}, "policies": ["plain"], "run": {"duration": "400ms"}})"));
    sim.run(300'000'000);
    HLoads h;
    h.cpu0 = sim.sched.cpu_load(0);
    h.cpu1 = sim.sched.cpu_load(1);
    for (int id = 0; id < sim.sched.nr_tasks(); ++id) {
        const Task& t = sim.sched.task(id);
        if (t.comm == "g0") h.g_task = sim.sched.task_load(t);
        if (t.comm == "root") h.root_task = sim.sched.task_load(t);
    }
    return h;
}

// The left_behind() run: CPU 0's load, and T's own, as T is switched in there after its move.
class ArrivalProbe final : public SchedObserver {
public:
    explicit ArrivalProbe(const Scheduler& s) : sched_(s) {}
    uint32_t interests() const override { return kObsSwitch; }
    void sched_switch(int cpu, const Task*, char, const Task* next) override {
        if (cpu != 0 || !next || next->comm != "T" || cpu0_load >= 0 || sched_.now() < 20'000'000) return;
        cpu0_load = sched_.cpu_load(0);
        t_load = next->pelt.load_avg;
    }
    double cpu0_load = -1, t_load = 0;

private:
    const Scheduler& sched_;
};

}  // namespace

TEST_CASE("A group's four hogs load their CPU as one task does, and the balancer weighs each at a quarter (task_h_load())",
          "[pelt][groups][balance]") {
    // The root's load sums its entities': the group's entity there, at the group's 1024 shares, is
    // always queued. task_h_load() scales a member's load by the entity's share of the root's
    // (update_cfs_rq_h_load()) over its group's runqueue's load: a quarter each. Without the group
    // the CPU carries the four loads and each weighs its own.
    const HLoads g = h_loads(true), f = h_loads(false);
    INFO("grouped: cpu0 " << g.cpu0 << " cpu1 " << g.cpu1 << " g0 " << g.g_task << " root " << g.root_task
                          << "; flat: cpu0 " << f.cpu0 << " cpu1 " << f.cpu1 << " g0 " << f.g_task << " root " << f.root_task);
    CHECK(g.cpu0 == Approx(1024).epsilon(0.03));
    CHECK(g.g_task == Approx(256).epsilon(0.05));
    CHECK(f.cpu0 == Approx(4096).epsilon(0.03));
    CHECK(f.g_task == Approx(1024).epsilon(0.03));
    // A root task's weighs its load times the root's h_load over its load plus one (the h_load of
    // this jiffy): a unit less here.
    CHECK(g.root_task < g.cpu1);
    CHECK(g.root_task > 0.99 * g.cpu1);
    CHECK(g.cpu1 == Approx(1024).epsilon(0.03));
}

TEST_CASE("A grouped task that moves brings its load to the new CPU's root at once, through its group's entity",
          "[pelt][groups]") {
    // attach_entity_load_avg() on the group's runqueue records the task's load_sum for the group's
    // entity (add_tg_cfs_propagate()), and the entity's update in the same enqueue takes it up
    // (update_tg_cfs_load()): the root's load rises at once, not over PELT's 32 ms half-life, by
    // the task's load at the entity's weight. calc_group_shares() gives the entity about half the
    // group's shares there, since tg->load_avg still counts the load T left on CPU 1. A root task's
    // load joins the root's in full. CPU 0 also still carries what the blocker B left there.
    const auto arrive = [](bool grouped) {
        const json d = doc(R"({"machine": )" + flat(2) + R"(, "groups": {"g": {"fair_group": )" +
                           (grouped ? "true" : "false") + R"(}},
          "workload": {"kind": "program", "tasks": [
            {"name": "B", "cpus": "0", "program": [{"run": "3ms"}]},
            {"name": "T", "group": "g", "program": [{"run": "20ms"}, {"sleep": "2ms"}, {"run": "60ms"}]},
            {"name": "H", "cpus": "1", "delay": "21ms", "program": [{"run": "100ms"}]}]},
          "policies": ["plain"], "run": {"duration": "120ms"}})");
        testutil::FuseSim sim(d);
        ArrivalProbe probe(sim.sched);
        sim.sched.set_observer(&probe);
        sim.run(40'000'000);
        return std::make_pair(probe.cpu0_load, probe.t_load);
    };
    const auto [root_cpu0, root_t] = arrive(false);
    const auto [group_cpu0, group_t] = arrive(true);
    const double b_left = root_cpu0 - root_t;  // B's load, decayed to T's arrival: the same in both runs
    INFO("CPU 0's load at T's arrival: root " << root_cpu0 << " (T " << root_t << "), grouped " << group_cpu0
                                             << " (T " << group_t << "); B's part " << b_left);
    REQUIRE(root_t > 500);
    // remove_entity_load_avg() syncs T to its runqueue's last update (sync_entity_load_avg()): the
    // root task to CPU 1's root, which H keeps current, so its sleep decays it; the grouped one to
    // its group's runqueue there, last updated when T slept, so it arrives undecayed.
    REQUIRE(group_t >= root_t);
    REQUIRE(group_t == Approx(root_t).epsilon(0.03));
    CHECK(b_left > 300);
    const double joined = (group_cpu0 - b_left) / group_t;
    CHECK(joined > 0.4);
    CHECK(joined < 0.6);
}
