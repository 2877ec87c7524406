// The fair wake path (select_task_rq_fair, wake_affine, select_idle_sibling, ttwu_queue) against
// worked traces T1-T8 of select_task_rq_fair and its checklist rows, against v6.19 fair.c.
// Each test builds a small scenario with the "program" workload, runs it, and checks metrics or the
// recorded decision events of one select_task_rq call.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "engine/engine.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/simulation.h"
#include "fuse_test_util.h"
#include "hw/hardware.h"
#include "kernel/observer.h"
#include "kernel/sched.h"
#include "kernel/wake_flags.h"
#include "sim/cpu_exec.h"
#include "sim/run_control.h"
#include "workloads/program/task_program.h"
#include "sim_test_util.h"

using namespace wakesim;

using namespace wakesim::testutil;
using json = nlohmann::json;

namespace {

// A on CPU0 and B on CPU1 (fork placement on an idle 2-CPU machine spreads them: B forks while A
// computes) ping-pong over two channels whose wakes carry `flags`; A counts one op per round trip.
// `before` lists tasks forked first; `prologue` is what A does before the loop; with `b_first` B is
// forked before A.
json pingpong(const std::string& flags, int loops, const std::string& policies, const std::string& run = "{}",
              const std::string& before = "", const std::string& prologue = "", bool b_first = false) {
    const std::string site = R"("flags": )" + flags + R"(, "sync_capable": true)";
    const std::string a = R"({"name": "A", "role": "requester", "program": [)" + prologue + R"({"loop": )" +
                          std::to_string(loops) + R"(, "do": [{"run": "5us"}, {"post": "ab"}, {"wait": "ba"}, {"op": 0}]}]})";
    const std::string b = R"({"name": "B", "role": "server", "program": [{"loop": )" + std::to_string(loops) +
                          R"(, "do": [{"wait": "ab"}, {"run": "5us"}, {"post": "ba"}]}]})";
    return doc(R"({"machine": "kvm-2vcpu",
      "workload": {"kind": "program",
        "channels": {"ab": {"wake": {)" + site + R"(, "role": "request"}},
                     "ba": {"wake": {)" + site + R"(, "role": "reply"}}},
        "tasks": [)" + before + (b_first ? b + "," + a : a + "," + b) + R"(]},
      "policies": )" + policies + R"(, "run": )" + run + "}");
}

// T3's start: a short task pinned to CPU1 keeps it busy while B and A fork, so both land on CPU0.
// B forks first and blocks at once (it waits for A); A then computes for 2 ms (the blocker is gone
// by then) before the ping-pong starts, so the first wakeup is A waking B with both on CPU0.
json pingpong_stacked(const std::string& flags, int loops, const std::string& policies) {
    return pingpong(flags, loops, policies, "{}", R"({"name": "blocker", "cpus": "1", "program": [{"run": "1ms"}]},)",
                    R"({"run": "2ms"}, )", true);
}

const std::string kNoFlags = "[]";
const std::string kSync = R"(["WF_SYNC"])";

}  // namespace

// ---------------------------------------------------------------------------------------------
// Worked traces (s.15).

TEST_CASE("T1: a plain ping-pong on an idle 2-CPU LLC never migrates and every wakeup is a remote IPI wake",
          "[wake_path][T1]") {
    // wake_affine_idle sends each wakee back to its idle prev, and select_idle_sibling returns the idle
    // target at step 1. (Measured the same on a real 6.18 kernel: plain does NOT migrate on most
    // wakeups when the LLC is idle.)
    const Outcome r = simulate(pingpong(kNoFlags, 200, R"(["plain"])", R"({"warmup_ops": 20})"));
    REQUIRE(r.completed);
    CHECK(r.n(Metric::ops) == 180);
    REQUIRE(r.n(Metric::wakeups) > 300);
    CHECK(r.n(Metric::migrations) == 0);
    CHECK(r.n(Metric::wakeups_local) == 0);
    CHECK(r.n(Metric::wakeups_remote) == r.n(Metric::wakeups));
    CHECK(r.n(Metric::wakeups_ipi) == r.n(Metric::wakeups));
    CHECK(r.n(Metric::select_sis_target) == r.n(Metric::wakeups));
    // Both CPUs alternate between idle and busy: symmetric utilisation.
    CHECK(r.util(0) > 0.1);
    CHECK(r.util(1) > 0.1);
    CHECK(std::abs(r.util(0) - r.util(1)) < 0.02);
}

TEST_CASE("T1: the first wakeup goes through wake_affine to the idle prev, and fork placement is not a migration",
          "[wake_path][T1][row32]") {
    const Outcome r = simulate(pingpong(kNoFlags, 50, R"(["plain"])"), "", 1);
    REQUIRE(r.completed);
    // Fork placement put A and B on different CPUs, yet the whole run, start included, counts no
    // migration.
    CHECK(r.n(Metric::migrations) == 0);
    REQUIRE(r.explained());
    const int prev = r.prev();
    const int this_cpu = r.this_cpu();
    CHECK(prev != this_cpu);
    REQUIRE(r.domain());
    CHECK(r.domain()->wake_affine);
    CHECK_FALSE(r.domain()->sync);
    REQUIRE(r.wake_affine());
    CHECK(r.wake_affine()->idle == AffineIdle::prev_idle);
    CHECK(r.wake_affine()->prev == prev);
    CHECK(r.wake_affine()->cpu == prev);
    CHECK(r.outcome() == SelectOutcome::sis_target);
    CHECK(r.outcome_cpu() == prev);
    CHECK(r.stays_on(prev));
}

TEST_CASE("explain: one wakeup's events come in the wake path's order and render as its decision path",
          "[wake_path][explain]") {
    const Outcome r = simulate(pingpong(kNoFlags, 50, R"(["plain"])"), "", 1);
    REQUIRE(r.explained());
    auto at = [&](auto* e) {
        for (size_t i = 0; i < r.events.size(); ++i)
            if (std::visit([&](const auto& x) { return static_cast<const void*>(&x) == static_cast<const void*>(e); },
                           r.events[i]))
                return static_cast<int>(i);
        return -1;
    };
    REQUIRE(r.fair());
    REQUIRE(r.want_affine());
    REQUIRE(r.domain());
    REQUIRE(r.wake_affine());
    REQUIRE(r.sis());
    REQUIRE(r.outcome_ev());
    REQUIRE(r.result());
    CHECK(at(r.fair()) == 0);
    CHECK(at(r.fair()) < at(r.want_affine()));
    CHECK(at(r.want_affine()) < at(r.domain()));
    CHECK(at(r.domain()) < at(r.wake_affine()));
    CHECK(at(r.wake_affine()) < at(r.sis()));
    CHECK(at(r.sis()) < at(r.outcome_ev()));
    CHECK(at(r.result()) == static_cast<int>(r.events.size()) - 1);
    // Every event of this path says something; the text starts with the call and ends with the result.
    const std::vector<std::string> lines = render(r.events);
    CHECK(lines.size() == r.events.size());
    CHECK(lines.front().rfind("select_task_rq_fair: wakee ", 0) == 0);
    CHECK(lines.back().rfind("result: cpu", 0) == 0);
}

TEST_CASE("explain says why a target without runnable tasks is not idle: a wakeup already queued on it",
          "[wake_path][explain]") {
    // idle_cpu() counts rq->ttwu_pending: a CPU whose wake list holds a wakee is busy for the next wakeup.
    const std::vector<std::string> pending = render({SisTargetBusyEv{3, 0, true, true}});
    CHECK(pending.at(0) == "  target cpu3 busy (nr_running=0, a wakeup already queued on it: ttwu_pending, which idle_cpu() counts)");
    CHECK(render({SisTargetBusyEv{3, 2, false, true}}).at(0) == "  target cpu3 busy (nr_running=2)");
    CHECK(render({SisTargetBusyEv{3, 0, false, false}}).at(0) ==
          "  target cpu3 usable, but the task does not fit it (task_fits_cpu)");
}

TEST_CASE("explain follows the wakeup to the wakee running: remote through the wake list, or local behind the waker",
          "[wake_path][explain]") {
    // The sync pair on the idle 2-CPU LLC: the wakee goes back to its idle prev, through prev's
    // wake list with an IPI (ttwu_queue_cond(): the target is idle), and switches in from idle.
    const Outcome r = simulate(pingpong(kSync, 200, R"(["plain"])", R"({"warmup_ops": 20})"), "", 5);
    REQUIRE(r.result());
    const WakeFollowUp& f = r.follow;
    REQUIRE(f.queued);
    CHECK(f.via == WokenVia::wakelist_ipi);
    CHECK(f.cpu == r.result()->cpu);
    CHECK(f.idle_state == "HLT");  // the guest's only idle state: no polling, hence the IPI
    CHECK_FALSE(f.idle_mwait);
    REQUIRE(f.enqueued);
    CHECK(f.curr.empty());  // the target was idle
    REQUIRE(f.ran);
    CHECK(f.prev.empty());  // switched in from idle
    CHECK(f.enqueued_at > 0);
    CHECK(f.ran_at > f.enqueued_at);  // the context switch after the enqueue takes time

    // Both pinned to CPU 0: the waker enqueues the wakee on its own CPU, which it is running, so
    // the wakee runs only when the waker leaves the CPU (it blocks, or is preempted).
    json d = pingpong(kSync, 200, R"(["plain"])", R"({"warmup_ops": 20})");
    for (auto& t : d["workload"]["tasks"]) t["cpus"] = "0";
    const Outcome p = simulate(d, "", 5);
    REQUIRE(p.result());
    REQUIRE(p.pinned());
    const WakeFollowUp& g = p.follow;
    REQUIRE(g.queued);
    CHECK(g.via == WokenVia::queue);
    CHECK(g.cpu == 0);
    CHECK(g.idle_state.empty());  // the waker is running there
    REQUIRE(g.enqueued);
    REQUIRE(p.fair() == nullptr);
    CHECK_FALSE(g.curr.empty());
    REQUIRE(g.ran);
    CHECK(g.prev == g.curr);  // the waker it was queued behind
    CHECK(g.ran_at > g.enqueued_at);
    CHECK(p.pinned()->call.waker_comm == g.curr);
}

TEST_CASE("explaining a wakeup leaves the run as it is, warm-up by time included", "[wake_path][explain]") {
    // The explained wakeup (the 3rd) falls in the warm-up; the run goes on to its end.
    const json d = pingpong(kSync, 500, R"(["plain"])", R"({"warmup": "200us"})");
    const Outcome plain = simulate(d);
    const Outcome explained = simulate(d, "", 3);
    REQUIRE(explained.follow.ran);
    CHECK(explained.completed == plain.completed);
    CHECK(explained.n(Metric::ops) == plain.n(Metric::ops));
    CHECK(explained.n(Metric::wakeups) == plain.n(Metric::wakeups));
    CHECK(explained.m.get(Metric::usec_per_op) == plain.m.get(Metric::usec_per_op));
    CHECK(explained.n(Metric::events) == plain.n(Metric::events));
}

TEST_CASE("T2: a sync ping-pong on an idle 2-CPU LLC goes back to the idle prev: WF_SYNC does not stack",
          "[wake_path][T2][row15]") {
    const Outcome r = simulate(pingpong(kSync, 200, R"(["plain"])", R"({"warmup_ops": 20})"), "", 5);
    REQUIRE(r.completed);
    CHECK(r.n(Metric::migrations) == 0);
    CHECK(r.n(Metric::wakeups_remote) == r.n(Metric::wakeups));
    CHECK(r.n(Metric::wakeups_ipi) == r.n(Metric::wakeups));
    // wake_affine_idle picks this_cpu (sync, waker alone), but the waker is running there, so
    // select_idle_sibling step 2 returns the idle prev.
    CHECK(r.n(Metric::select_sis_prev) == r.n(Metric::wakeups));
    CHECK(r.n(Metric::select_sis_target) == 0);
    REQUIRE(r.wake_affine());
    CHECK(r.wake_affine()->idle == AffineIdle::sync_alone);
    CHECK(r.has<SisTargetBusyEv>());
    CHECK(r.outcome() == SelectOutcome::sis_prev);
    REQUIRE(r.result());
    CHECK(r.result()->cpu == r.result()->from);
}

TEST_CASE("T2: perf bench sched pipe on the 2-vCPU guest does not migrate in steady state", "[wake_path][T2]") {
    const Outcome r = simulate(doc(R"({"machine": "kvm-2vcpu", "workload": {"kind": "pipe", "loops": 500},
                                       "policies": ["plain"], "run": {"warmup_ops": 50}})"));
    REQUIRE(r.completed);
    CHECK(r.n(Metric::ops) == 450);
    CHECK(r.n(Metric::migrations) == 0);
    CHECK(r.n(Metric::wakeups_local) == 0);
    CHECK(r.n(Metric::wakeups_ipi) == r.n(Metric::wakeups));
    CHECK(r.n(Metric::select_sis_prev) == r.n(Metric::wakeups));
}

TEST_CASE("T3: a pair that starts stacked on CPU0 migrates exactly once, then stays spread", "[wake_path][T3]") {
    const json d = pingpong_stacked(kNoFlags, 100, R"(["plain"])");
    const Outcome r = simulate(d);
    REQUIRE(r.completed);
    CHECK(r.n(Metric::migrations) == 1);
    CHECK(r.n(Metric::migrations_wakeup) == 1);
    CHECK(r.n(Metric::select_sis_scan) == 1);
    CHECK(r.n(Metric::wakeups_ipi) == r.n(Metric::wakeups));

    // First wake: prev == this_cpu skips wake_affine; CPU0 is busy, so the scan finds CPU1.
    const Outcome w1 = simulate(d, "", 1);
    CHECK(w1.wakee() == "B");
    CHECK(w1.prev() == 0);
    CHECK(w1.waker() == "A");
    CHECK(w1.this_cpu() == 0);
    REQUIRE(w1.domain());
    CHECK_FALSE(w1.domain()->wake_affine);  // this_cpu == prev: wake_affine skipped
    CHECK_FALSE(w1.has<WakeAffineEv>());
    REQUIRE(w1.idle_scan());
    CHECK_FALSE(w1.idle_scan()->idle_core_scan);
    CHECK(w1.idle_scan()->cpu >= 0);
    CHECK(w1.outcome() == SelectOutcome::sis_scan);
    CHECK(w1.moves(0, 1));
    // Second wake: A's prev CPU0 is idle again, so A stays.
    const Outcome w2 = simulate(d, "", 2);
    CHECK(w2.stays_on(0));
}

TEST_CASE("T4: WF_CURRENT_CPU keeps a ping-pong pair on one CPU with local wakeups and no IPIs", "[wake_path][T4][row4]") {
    SECTION("from T3's start (both on CPU0): no migration at all") {
        const Outcome r = simulate(pingpong_stacked(kNoFlags, 100, R"(["seccomp_current_cpu"])"));
        REQUIRE(r.completed);
        CHECK(r.n(Metric::ops) == 100);
        CHECK(r.n(Metric::migrations) == 0);
        CHECK(r.n(Metric::wakeups_remote) == 0);
        CHECK(r.n(Metric::wakeups_ipi) == 0);
        CHECK(r.n(Metric::ipis) == 0);
        CHECK(r.n(Metric::select_current_cpu) > 0);
        // Wakeups either short-circuit to this_cpu or find the wakee still queued (no placement).
        CHECK(r.n(Metric::select_current_cpu) + r.n(Metric::wakeups_no_placement) == r.n(Metric::wakeups));
        CHECK(r.util(0) > 0.95);
    }
    SECTION("from T1's start (spread): the first wakeup pulls the pair together, then it is stable") {
        const Outcome r = simulate(pingpong(kNoFlags, 200, R"(["seccomp_current_cpu"])"));
        REQUIRE(r.completed);
        CHECK(r.n(Metric::migrations) == 1);
        CHECK(r.n(Metric::wakeups_remote) == 0);
        CHECK(r.n(Metric::ipis) == 0);
        CHECK(std::max(r.util(0), r.util(1)) > 0.95);
        CHECK(std::min(r.util(0), r.util(1)) < 0.05);
    }
}

TEST_CASE("T5: reciprocal_sync stacks a non-SMT sync pair on the waker's CPU after one migration", "[wake_path][T5][row41]") {
    const json d = pingpong(kSync, 200, R"(["plain", "reciprocal_sync"])");
    const Outcome r = simulate(d, "reciprocal_sync");
    REQUIRE(r.completed);
    CHECK(r.n(Metric::migrations) == 1);
    CHECK(r.n(Metric::select_policy_affine) > 0);
    CHECK(r.n(Metric::wakeups_remote) <= 1);  // only the first wake, before the pair has met
    CHECK(std::max(r.util(0), r.util(1)) > 0.95);

    // Wake 1 (B wakes A): A's last_wakee is not B yet, so the normal path returns A's idle prev.
    const Outcome w1 = simulate(d, "reciprocal_sync", 1);
    CHECK_FALSE(w1.has<PolicyRuleEv>());
    CHECK(w1.stays_on(0));
    // Wake 2 (A wakes B): wake_affine chose this_cpu, B last woke A, A is alone: the rule fires
    // before select_idle_sibling and B moves to A's CPU (the one migration).
    const Outcome w2 = simulate(d, "reciprocal_sync", 2);
    REQUIRE(w2.wake_affine());
    CHECK(w2.wake_affine()->idle == AffineIdle::sync_alone);
    CHECK(w2.wake_affine()->this_cpu == 0);
    CHECK(w2.wake_affine()->cpu == 0);
    REQUIRE(w2.policy_rule());
    CHECK(w2.policy_rule()->rule == "reciprocal_sync");
    CHECK(w2.policy_rule()->hook == PolicyHook::after_wake_affine);
    CHECK(w2.policy_rule()->cpu == 0);
    CHECK(w2.outcome() == SelectOutcome::policy_affine);
    CHECK_FALSE(w2.has<SisBeginEv>());
    CHECK(w2.moves(1, 0));
    // Wake 3: this_cpu == prev skips wake_affine, new_cpu = prev = this_cpu, and the rule fires again.
    const Outcome w3 = simulate(d, "reciprocal_sync", 3);
    REQUIRE(w3.domain());
    CHECK_FALSE(w3.domain()->wake_affine);
    REQUIRE(w3.policy_rule());
    CHECK(w3.policy_rule()->rule == "reciprocal_sync");
    CHECK(w3.policy_rule()->hook == PolicyHook::after_wake_affine);
    CHECK(w3.policy_rule()->cpu == 0);
    CHECK(w3.stays_on(0));

    // The same pair under plain stays spread.
    const Outcome p = simulate(d, "plain");
    CHECK(p.n(Metric::migrations) == 0);
    CHECK(p.n(Metric::select_policy_affine) == 0);
}

TEST_CASE("T5: reciprocal_sync never fires on an SMT machine", "[wake_path][T5][row41]") {
    const json d = doc(R"({"machine": "xeon-2s-16c32t", "workload": {"kind": "pipe", "loops": 300},
                           "policies": ["plain", "reciprocal_sync"]})");
    const Outcome plain = simulate(d, "plain");
    const Outcome rs = simulate(d, "reciprocal_sync");
    REQUIRE(rs.completed);
    CHECK(rs.n(Metric::select_policy_affine) == 0);
    CHECK(rs.m == plain.m);
}

TEST_CASE("T5: reciprocal_sync ignores wakeups without WF_SYNC", "[wake_path][T5][row41]") {
    const json d = pingpong(kNoFlags, 100, R"(["plain", "reciprocal_sync"])");
    const Outcome rs = simulate(d, "reciprocal_sync");
    CHECK(rs.n(Metric::select_policy_affine) == 0);
    CHECK(rs.m == simulate(d, "plain").m);
}

namespace {

// An 8-CPU LLC where CPUs 1..last_hog run pinned hogs and W (pinned to CPU0) computes for
// `w_run` before it wakes P (plus `more` tasks).
json waker_after_hogs(const std::string& flags, const std::string& features, int last_hog, const std::string& w_run,
                      const std::string& more, const std::string& duration) {
    std::string hogs;
    for (int c = 1; c <= last_hog; ++c) hogs += "," + hog("h" + std::to_string(c), c);
    return doc(R"({"machine": )" + flat(8) + R"(, "features": )" + features + R"(,
      "workload": {"kind": "program",
        "channels": {"ch": {"wake": {"flags": )" + flags + R"(}}},
        "tasks": [
          {"name": "W", "cpus": "0", "program": [{"run": ")" + w_run + R"("}, {"post": "ch"}, {"run": "1ms"}]},
          {"name": "P", "program": [{"wait": "ch"}, {"run": "10us"}]})" + hogs + more + R"(]},
      "policies": ["plain"], "run": {"duration": ")" + duration + R"("}})");
}

// T6: CPUs 1-6 run hogs and W wakes P, whose prev is CPU1, after 200 ms. By then periodic
// balance has refreshed nr_idle_scan from an average LLC utilisation of 7/8, so the scan depth
// is 0. CPU7 is idle all along.
json sis_util_cutoff(const std::string& flags, const std::string& features = "{}") {
    return waker_after_hogs(flags, features, 6, "200ms", "", "210ms");
}

}  // namespace

TEST_CASE("T6: with nr_idle_scan at 0 select_idle_cpu does not scan and a sync wakeup stacks on the waker",
          "[wake_path][T6][row23]") {
    const Outcome r = simulate(sis_util_cutoff(kSync), "", 1);
    REQUIRE(r.explained());
    CHECK(r.wakee() == "P");
    CHECK(r.prev() == 1);
    CHECK(r.waker() == "W");
    CHECK(r.this_cpu() == 0);
    REQUIRE(r.idle_scan());
    CHECK(r.idle_scan()->cpu == -1);
    CHECK(r.idle_scan()->probes == 0);
    CHECK(r.idle_scan()->nr_idle_scan == 0);
    CHECK(r.outcome() == SelectOutcome::sis_fallback);
    CHECK(r.fallback() == SisFallback::target);
    CHECK(r.outcome_cpu() == 0);
    CHECK(r.moves(1, 0));

    // Without SIS_UTIL the same wakeup scans the LLC and finds the idle CPU7.
    const Outcome u = simulate(sis_util_cutoff(kSync, R"({"SIS_UTIL": false})"), "", 1);
    CHECK(u.moves(1, 7));

    // A plain wakeup does not find CPU7 either (its target is whatever wake_affine_weight chose).
    const Outcome n = simulate(sis_util_cutoff(kNoFlags), "", 1);
    REQUIRE(n.idle_scan());
    CHECK(n.idle_scan()->nr_idle_scan == 0);
    CHECK(n.result_cpu() != 7);
}

namespace {

// As T6 with three hogs (CPUs 1-3) and A pinned to CPU4: A computes 300 ms (util_avg and util_est
// near 1024), sleeps 40 ms (util_avg decays to about 440) and runs again from 340 ms. W (CPU0)
// wakes P at 350 ms, when A's CPU has util_avg about 550 but util_est about 1000.
json util_est_scan(const std::string& features) {
    return waker_after_hogs(kSync, features, 3, "350ms",
                            R"(, {"name": "A", "cpus": "4", "program": [{"run": "300ms"}, {"sleep": "40ms"}, {"run": "200ms"}]})",
                            "355ms");
}

}  // namespace

TEST_CASE("SIS_UTIL reads cpu_util_cfs(): a task back from a short sleep counts with its util_est, so the scan is shallower",
          "[wake_path][row23][util_est]") {
    // Average LLC utilisation (4 x 1024 + max(550, 1000)) / 8 = 637: 3 CPUs to scan. From util_avg
    // alone, (4 x 1024 + 550) / 8 = 580: 4 CPUs, as with UTIL_EST off.
    const Outcome r = simulate(util_est_scan("{}"), "", 2);
    REQUIRE(r.wakee() == "P");
    REQUIRE(r.idle_scan());
    CHECK(r.idle_scan()->nr_idle_scan == 3);
    const Outcome off = simulate(util_est_scan(R"({"UTIL_EST": false})"), "", 2);
    REQUIRE(off.wakee() == "P");
    REQUIRE(off.idle_scan());
    CHECK(off.idle_scan()->nr_idle_scan == 4);
}

TEST_CASE("Row 23: an LLC whose scan depth starts at zero does not scan before the first periodic balance",
          "[wake_path][row23]") {
    json d = pingpong_stacked(kNoFlags, 20, R"(["plain"])");
    d["sched"] = {{"sis_scan_at_start", "zero"}};
    const Outcome r = simulate(d, "", 1);
    // T3's first wakeup, which would scan and find CPU1, stacks on CPU0 instead.
    REQUIRE(r.idle_scan());
    CHECK(r.idle_scan()->cpu == -1);
    CHECK(r.idle_scan()->probes == 0);
    CHECK(r.idle_scan()->nr_idle_scan == 0);
    CHECK(r.stays_on(0));
}

namespace {

// T7: a dispatcher D hands work to 8 workers in turn over per-worker channels and waits for each
// to finish, so the wakeups form one chain: D wakes W0, W0 wakes D, D wakes W1, ... D's
// last_wakee changes on every wake, so its flips grow by one per wake of a worker. With `sink`,
// every worker also wakes a sink task before it wakes D, so its own flips grow by two per round.
// The 2-CPU guest has llc_size 2: wake_wide needs the smaller flips >= 2 and the larger >= 2 x that.
json dispatcher(bool sink, int rounds = 4) {
    const int workers = 8;
    std::string chans = R"("done": {}, "sink": {})", d_steps, tasks;
    for (int i = 0; i < workers; ++i) {
        const std::string w = "w" + std::to_string(i);
        chans += R"(, ")" + w + R"(": {})";
        d_steps += R"(, {"post": ")" + w + R"("}, {"wait": "done"})";
        tasks += R"(, {"name": "W)" + std::to_string(i) + R"(", "program": [{"loop": )" + std::to_string(rounds) +
                 R"(, "do": [{"wait": ")" + w + R"("}, {"run": "20us"})" + (sink ? R"(, {"post": "sink"})" : "") +
                 R"(, {"post": "done"}]}]})";
    }
    if (sink)
        tasks += R"(, {"name": "S", "program": [{"loop": )" + std::to_string(rounds * workers) +
                 R"(, "do": [{"wait": "sink"}]}]})";
    // D computes first so that every worker is asleep on its channel when the chain starts.
    return doc(R"({"machine": "kvm-2vcpu",
      "workload": {"kind": "program", "channels": {)" + chans + R"(},
        "tasks": [{"name": "D", "program": [{"run": "200us"}, {"loop": )" + std::to_string(rounds) + R"(, "do": [{"run": "1us"})" +
               d_steps + R"(, {"op": 0}]}]})" + tasks + R"(]},
      "policies": ["plain"]})");
}

}  // namespace

TEST_CASE("T7: a 1:N dispatcher whose workers only wake it back is never wake_wide", "[wake_path][T7][row6][row7]") {
    // Each worker's last_wakee is always D: its flips stay at 1, below llc_size.
    const Outcome r = simulate(dispatcher(false));
    REQUIRE(r.completed);
    CHECK(r.n(Metric::ops) == 4);
    CHECK(r.n(Metric::wakeups) == 4 * 8 * 2);
    CHECK(r.n(Metric::wakeups_wide) == 0);
}

TEST_CASE("T7: when the workers flip too, wake_wide turns want_affine off and placement starts from prev",
          "[wake_path][T7][row6][row7]") {
    const json d = dispatcher(true);
    const Outcome r = simulate(d);
    REQUIRE(r.completed);
    CHECK(r.n(Metric::wakeups) >= 4 * 8 * 2);
    CHECK(r.n(Metric::wakeups_wide) > 0);
    // Within the first round a worker (flips 2: it woke the sink, then D) wakes D once D's flips
    // reach 4: the first wide wakeup. Its path: no wake_affine; select_idle_sibling starts from prev.
    int first_wide = 0;
    for (uint64_t nth = 1; nth <= 24 && !first_wide; ++nth) {
        const Outcome w = simulate(d, "", nth);
        const WantAffineEv* wa = w.want_affine();
        if (!wa || !wa->wide) continue;
        first_wide = static_cast<int>(nth);
        CHECK(w.wakee() == "D");
        CHECK(wa->waker_flips == 2);
        CHECK(wa->wakee_flips == 4);
        CHECK_FALSE(wa->want_affine);
        CHECK_FALSE(w.has<DomainEv>());
        CHECK_FALSE(w.has<WakeAffineEv>());
        const int prev = w.prev();
        REQUIRE(w.sis());
        CHECK(w.sis()->prev == prev);
        CHECK(w.sis()->target == prev);
    }
    CHECK(first_wide > 0);
}

namespace {

// T8: P is forked on CPU2 and waits for "I/O"; a kworker bound to CPU2 completes it.
json io_completion(bool kthread) {
    return doc(R"({"machine": )" + flat(4) + R"(,
      "workload": {"kind": "program", "parent_cpu": 2,
        "channels": {"io": {}},
        "tasks": [
          {"name": "P", "program": [{"wait": "io"}, {"run": "10us"}]},
          {"name": "kworker", "cpus": "2", "kthread": )" + std::string(kthread ? "true" : "false") +
               R"(, "program": [{"run": "50us"}, {"post": "io"}, {"run": "5us"}]}]},
      "policies": ["plain"]})");
}

}  // namespace

TEST_CASE("T8: a per-CPU kthread alone on prev stacks the woken task on its CPU although others are idle",
          "[wake_path][T8][row18]") {
    const Outcome r = simulate(io_completion(true), "", 1);
    CHECK(r.outcome() == SelectOutcome::sis_kthread);
    CHECK(r.stays_on(2));
    CHECK(r.n(Metric::select_sis_kthread) == 1);
    // An ordinary pinned waker does not get this: the scan moves P to the next idle CPU.
    const Outcome o = simulate(io_completion(false), "", 1);
    CHECK(o.n(Metric::select_sis_kthread) == 0);
    CHECK(o.moves(2, 3));
}

// ---------------------------------------------------------------------------------------------
// Checklist rows (s.17).

TEST_CASE("Row 3: a task pinned to one CPU skips the fair class and always wakes there", "[wake_path][row3]") {
    const json d = doc(R"({"machine": )" + flat(4) + R"(,
      "workload": {"kind": "program", "channels": {"ab": {}, "ba": {}},
        "tasks": [
          {"name": "A", "cpus": "0", "program": [{"loop": 50, "do": [{"run": "5us"}, {"post": "ab"}, {"wait": "ba"}, {"op": 0}]}]},
          {"name": "B", "cpus": "3", "program": [{"loop": 50, "do": [{"wait": "ab"}, {"run": "5us"}, {"post": "ba"}]}]}]},
      "policies": ["plain"]})");
    const Outcome r = simulate(d, "", 2);
    REQUIRE(r.completed);
    CHECK(r.n(Metric::migrations) == 0);
    CHECK(r.n(Metric::select_pinned) == r.n(Metric::wakeups) - r.n(Metric::wakeups_no_placement));
    CHECK(r.n(Metric::select_pinned) > 0);
    for (Metric k : {Metric::select_sis_target, Metric::select_sis_prev, Metric::select_sis_scan,
                     Metric::select_sis_fallback, Metric::select_sis_recent, Metric::select_current_cpu,
                     Metric::select_slow_path})
        CHECK(r.n(k) == 0);
    REQUIRE(r.pinned());
    CHECK_FALSE(r.pinned()->migration_disabled);  // one allowed CPU: the fair class is not consulted
    CHECK(r.outcome() == SelectOutcome::pinned);
    CHECK_FALSE(r.fair());
    CHECK(r.util(1) == 0.0);
    CHECK(r.util(2) == 0.0);
}

namespace {

// W (pinned to CPU0) wakes P with WF_CURRENT_CPU; P is forked on CPU1 (idle at the wake).
json current_cpu_wake(const std::string& p_cpus) {
    return doc(R"({"machine": )" + flat(4) + R"(,
      "workload": {"kind": "program",
        "channels": {"ch": {"wake": {"flags": ["WF_CURRENT_CPU"]}}},
        "tasks": [
          {"name": "W", "cpus": "0", "program": [{"run": "50us"}, {"post": "ch"}, {"run": "5us"}]},
          {"name": "P", )" + p_cpus + R"("program": [{"wait": "ch"}, {"run": "10us"}]}]},
      "policies": ["plain"]})");
}

}  // namespace

TEST_CASE("Row 5: WF_CURRENT_CPU is ignored when the waker's CPU is not allowed for the wakee", "[wake_path][row5][row8]") {
    // Allowed on the waker's CPU: the short-circuit returns this_cpu.
    const Outcome a = simulate(current_cpu_wake(""), "", 1);
    CHECK(a.outcome() == SelectOutcome::current_cpu);
    CHECK(a.outcome_cpu() == 0);
    CHECK(a.moves(1, 0));
    CHECK(a.n(Metric::select_current_cpu) == 1);
    // Not allowed: the normal path runs, and since this_cpu is not allowed want_affine is off too
    // (row 8), so the target is prev, which is idle.
    const Outcome n = simulate(current_cpu_wake(R"("cpus": "1-3", )"), "", 1);
    CHECK(n.outcome() != SelectOutcome::current_cpu);
    REQUIRE(n.want_affine());
    CHECK_FALSE(n.want_affine()->want_affine);
    CHECK(n.stays_on(1));
    CHECK(n.n(Metric::select_current_cpu) == 0);
}

namespace {

// Two nodes of two CPUs ({0,1} and {2,3}) at `distance`; P is forked on CPU2, W is pinned to CPU0
// and wakes P with WF_SYNC. Optional hogs keep CPUs 2 and 3 busy.
json cross_node(int distance, bool busy_node1 = false) {
    const std::string d = std::to_string(distance);
    const std::string hogs = busy_node1 ? "," + hog("h2", 2) + "," + hog("h3", 3) : "";
    return doc(R"({"machine": {"topology": {"name": "2node", "packages": 2, "cores_per_cluster": 2,
                                            "node_distance": [[10, )" + d + "], [" + d + R"(, 10]]},
                               "profile": {"base": "kvm-2vcpu"}},
      "workload": {"kind": "program", "parent_cpu": 2,
        "channels": {"ch": {"wake": {"flags": ["WF_SYNC"]}}},
        "tasks": [
          {"name": "P", "program": [{"wait": "ch"}, {"run": "10us"}]},
          {"name": "W", "cpus": "0", "program": [{"run": "1ms"}, {"post": "ch"}, {"run": "5us"}]})" + hogs + R"(]},
      "policies": ["plain"], "run": {"duration": "3ms"}})");
}

}  // namespace

TEST_CASE("Row 9: across NUMA nodes at distance 32 there is no wake_affine and the target is prev", "[wake_path][row9]") {
    const Outcome far = simulate(cross_node(32), "", 1);
    REQUIRE(far.want_affine());
    CHECK(far.want_affine()->want_affine);
    CHECK_FALSE(far.has<DomainEv>());
    CHECK_FALSE(far.has<WakeAffineEv>());
    REQUIRE(far.sis());
    CHECK(far.sis()->prev == 2);
    CHECK(far.sis()->target == 2);
    CHECK(far.stays_on(2));
    CHECK(far.n(Metric::migrations) == 0);
    // At distance 21 the NUMA domain keeps SD_WAKE_AFFINE: the sync wake pulls P to the waker's
    // node, where the scan finds CPU1 (prev is idle but in another LLC).
    const Outcome near = simulate(cross_node(21), "", 1);
    REQUIRE(near.domain());
    CHECK(near.domain()->name == "NUMA");
    CHECK(near.domain()->wake_affine);
    CHECK(near.domain()->sync);
    CHECK(near.has<WakeAffineEv>());
    REQUIRE(near.prev_skipped());
    CHECK(near.prev_skipped()->prev == 2);
    CHECK(near.prev_skipped()->why == PrevSkip::not_cache_affine);
    CHECK(near.moves(2, 1));
    CHECK(near.n(Metric::migrations_cross_numa) == 1);
}

namespace {

// P is forked on CPU0 next to W (pinned there), which wakes it; CPU1 runs a hog of `policy`.
json next_to_hog(const std::string& policy) {
    return doc(R"({"machine": "kvm-2vcpu",
      "workload": {"kind": "program",
        "channels": {"ch": {}},
        "tasks": [
          {"name": "P", "program": [{"wait": "ch"}, {"run": "10us"}]},
          {"name": "W", "cpus": "0", "program": [{"run": "100us"}, {"post": "ch"}, {"run": "50us"}]}],
        "hogs": {"count": 1, "cpus": "1", "policy": ")" + policy + R"("}},
      "policies": ["plain"], "run": {"duration": "5ms"}})");
}

}  // namespace

TEST_CASE("Row 17: a CPU running only a SCHED_IDLE task counts as idle and the wakee preempts it at once",
          "[wake_path][row17]") {
    const Outcome r = simulate(next_to_hog("idle"), "", 1);
    REQUIRE(r.idle_scan());
    CHECK_FALSE(r.idle_scan()->idle_core_scan);
    CHECK(r.idle_scan()->cpu == 1);
    CHECK(r.moves(0, 1));
    CHECK(r.n(Metric::preemptions) == 1);
    CHECK(r.n(Metric::wake_latency_ns_max) < 10000);
    // With a normal hog on CPU1 the LLC is full and P waits behind W on CPU0.
    const Outcome n = simulate(next_to_hog("normal"), "", 1);
    REQUIRE(n.idle_scan());
    CHECK(n.idle_scan()->cpu == -1);
    CHECK(n.stays_on(0));
    CHECK(n.n(Metric::wake_latency_ns_max) > 40000);
}

TEST_CASE("Row 17: a delayed SCHED_IDLE sleeper still counts toward sched_idle_cpu (h_nr_idle keeps it)",
          "[wake_path][row17][delay_dequeue]") {
    // CPU1 runs two SCHED_IDLE tasks. I1 runs 700 us ahead of I2 (forked next to it) and blocks while ineligible, so
    // DELAY_DEQUEUE leaves it queued; dequeue_entities() returns before it touches h_nr_idle, so
    // nr_running (2) == h_nr_idle (2) and sched_idle_cpu(1) holds. P's wake at 900 us (CPU0 busy
    // with W) therefore takes CPU1 and preempts I2. Counting only runnable SCHED_IDLE tasks would
    // see a busy CPU1 and keep P on CPU0, where it preempts W.
    const json d = doc(R"({"machine": "kvm-2vcpu",
      "workload": {"kind": "program",
        "channels": {"ch": {}},
        "tasks": [
          {"name": "I1", "cpus": "1", "policy": "idle", "program": [{"run": "700us"}, {"sleep": "5ms"}]},
          {"name": "I2", "cpus": "1", "policy": "idle", "delay": "10us", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
          {"name": "P", "program": [{"wait": "ch"}, {"run": "10us"}]},
          {"name": "W", "cpus": "0", "program": [{"run": "900us"}, {"post": "ch"}, {"run": "500us"}]}]},
      "policies": ["plain"], "run": {"duration": "2ms"}})");
    const Outcome r = simulate(d, "", 1);
    REQUIRE(r.wakee() == "P");
    CHECK(r.outcome_cpu() == 1);
    CHECK(r.moves(0, 1));
    CHECK(r.n(Metric::preemptions) == 1);
}

namespace {

// A delayed-dequeue sleeper's EEVDF state around its wakeups (ttwu_runnable): at sched_waking,
// and after requeue_delayed_entity() (ttwu_woken, sent before the preemption check updates the
// running task), with the vruntime of the task running on its CPU at that moment.
class RequeueProbe final : public SchedObserver {
public:
    struct Snap {
        int64_t vruntime = 0, deadline = 0, curr_vruntime = 0;
        bool delayed = false;
    };
    RequeueProbe(const Scheduler& s, std::string comm) : sched_(s), comm_(std::move(comm)) {}
    uint32_t interests() const override { return kObsTtwuWaking | kObsTtwuWoken; }
    void ttwu_waking(const Task& p, const Task*, int) override {
        if (p.comm == comm_) before = snap(p);
    }
    void ttwu_woken(const Task& p, int, int, WokenVia via, const SelectResultEv*) override {
        if (p.comm != comm_ || via != WokenVia::delayed) return;
        after = snap(p);
        ++requeues;
    }
    Snap before, after;
    int requeues = 0;

private:
    Snap snap(const Task& p) const {
        const Task* c = sched_.current(p.cpu);
        return {p.vruntime, p.deadline, c ? c->vruntime : 0, p.sched_delayed};
    }
    const Scheduler& sched_;
    std::string comm_;
};

// D (nice -6) runs 600 us on CPU 1 ahead of B and blocks while ineligible, so DELAY_DEQUEUE keeps
// it queued; B runs on, protected by its slice past the 4 ms tick. W on CPU 0 wakes D at `wake`
// (ttwu_runnable on CPU 1). Returns D's state at sched_waking and after the requeue.
std::pair<RequeueProbe::Snap, RequeueProbe::Snap> requeue(const std::string& wake, bool delay_zero) {
    const json d = doc(R"({"machine": )" + flat(2) + R"(, "features": {"DELAY_ZERO": )" + (delay_zero ? "true" : "false") + R"(},
      "workload": {"kind": "program", "channels": {"ch": {}},
        "tasks": [
          {"name": "D", "cpus": "1", "nice": -6, "delay": "3000us", "program": [{"run": "600us"}, {"wait": "ch"}, {"run": "2ms"}]},
          {"name": "B", "cpus": "1", "delay": "3010us", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
          {"name": "W", "cpus": "0", "program": [{"run": ")" + wake + R"("}, {"post": "ch"}, {"run": "1ms"}]}]},
      "policies": ["plain"], "run": {"duration": "8ms"}})");
    testutil::FuseSim sim(d);
    RequeueProbe probe(sim.sched, "D");
    sim.sched.set_observer(&probe);
    sim.run(8000000);  // the scenario's duration: B loops for ever
    INFO("wake at " << wake << (delay_zero ? ", DELAY_ZERO" : ", NO_DELAY_ZERO"));
    REQUIRE(probe.requeues == 1);  // D was woken while still queued, once
    CHECK(probe.before.delayed);
    CHECK_FALSE(probe.after.delayed);
    return {probe.before, probe.after};
}

}  // namespace

TEST_CASE("DELAY_ZERO: a delayed sleeper woken after V has passed it loses that lag and is placed afresh at V",
          "[wake_path][delay_dequeue][eevdf]") {
    // requeue_delayed_entity() (v6.19): under DELAY_ZERO a woken delayed entity with positive lag
    // gets vlag = 0 and place_entity(): vruntime = V (here the running B's, the only other
    // entity) and a new deadline a slice on. Without DELAY_ZERO it keeps its old vruntime and
    // deadline, and with them the service it is owed. Woken before V has passed it, it keeps
    // its place either way.
    const double vslice = 1400000.0 * 1024 / 3906;  // a 1.4 ms slice in nice -6 virtual time
    const auto [zb, za] = requeue("4100us", true);
    CHECK(zb.curr_vruntime > zb.vruntime + 100000);  // B is past D: D's lag is positive
    CHECK(za.vruntime == za.curr_vruntime);
    CHECK(std::abs(static_cast<double>(za.deadline - za.vruntime) - vslice) < 2);
    CHECK(za.deadline > zb.deadline + 100000);

    const auto [kb, ka] = requeue("4100us", false);
    CHECK(kb.curr_vruntime > kb.vruntime + 100000);
    CHECK(ka.vruntime == kb.vruntime);
    CHECK(ka.deadline == kb.deadline);

    // At 3.7 ms B has run 100 us, not yet past D (nor did a tick update it): negative lag.
    const auto [eb, ea] = requeue("3700us", true);
    CHECK(eb.curr_vruntime < eb.vruntime);
    CHECK(ea.vruntime == eb.vruntime);
    CHECK(ea.deadline == eb.deadline);
}

TEST_CASE("A context switch is the next task's runtime: the tasks' sum_exec_runtime adds up to the CPU's busy time",
          "[wake_path][eevdf]") {
    // set_next_entity() takes exec_start from the clock __schedule() read, so the switch (and
    // the return to the task) counts in the next task's vruntime and sum_exec_runtime, as the
    // kernel's accounting does. Two tasks ping-pong 2,000 times on CPU 0, a 5 us step each.
    const json d = doc(R"({"machine": "kvm-2vcpu",
      "workload": {"kind": "program", "channels": {"ab": {}, "ba": {}},
        "tasks": [
          {"name": "A", "cpus": "0", "program": [{"loop": 2000, "do": [{"run": "5us"}, {"post": "ab"}, {"wait": "ba"}]}]},
          {"name": "B", "cpus": "0", "program": [{"loop": 2000, "do": [{"wait": "ab"}, {"run": "5us"}, {"post": "ba"}]}]}]},
      "policies": ["plain"], "run": {"duration": "1s"}})");
    testutil::FuseSim sim(d);
    sim.run();
    const Scheduler& sched = sim.sched;
    int64_t exec = 0;
    for (int i = 0; i < sched.nr_tasks(); ++i) {
        INFO(sched.task(i).comm);
        CHECK(sched.task(i).state == TaskState::exited);
        exec += sched.task(i).sum_exec;
    }
    const int64_t busy = sim.cpus().cpu_busy_ns(0);
    // 4,000 switches of kvm-2vcpu's 3.8 us would be 15 ms missing if the switch were nobody's.
    INFO("sum_exec " << exec << " ns, busy " << busy << " ns");
    CHECK(busy > 20000000);
    CHECK(std::llabs(busy - exec) < 20000);
}

TEST_CASE("A timer wakeup runs in the interrupt of the sleeper's CPU: this_cpu is prev, and preempting there needs no IPI",
          "[wake_path][timer]") {
    // P runs on CPU 1 and sleeps 100 us; meanwhile a hog takes CPU 1. hrtimer_wakeup() runs on
    // CPU 1 (the timer was armed there), so try_to_wake_up's this_cpu is P's prev. CPU 0 is busy
    // too, P wakes on CPU 1 and preempts the hog on the way out of the timer interrupt.
    const json d = doc(R"({"machine": "kvm-2vcpu",
      "workload": {"kind": "program",
        "tasks": [
          {"name": "P", "cpus": "1", "program": [{"run": "50us"}, {"sleep": "100us"}, {"run": "10us"}]},
          {"name": "H0", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
          {"name": "H1", "cpus": "1", "delay": "60us", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]}]},
      "policies": ["plain"], "run": {"duration": "1ms"}})");
    const Outcome r = simulate(d, "", 0);
    CHECK(r.n(Metric::wakeups) >= 1);
    CHECK(r.n(Metric::wakeups_local) == r.n(Metric::wakeups));
    CHECK(r.n(Metric::ipis) == 0);
    CHECK(r.n(Metric::preemptions) >= 1);
    CHECK(r.n(Metric::wake_latency_ns_max) < 5000);
}

TEST_CASE("Row 19: an idle recent_used_cpu is taken before the idle-CPU scan", "[wake_path][row19]") {
    // busy3 keeps CPU3 busy while P forks from CPU3, so P lands on CPU0 with recent_used_cpu = 3.
    // At the wake CPU0 (hog) and CPU1 (waker) are busy; CPUs 2 and 3 are idle. The scan from the
    // target would find CPU2; recent_used_cpu gives CPU3.
    const json d = doc(R"({"machine": )" + flat(4) + R"(,
      "workload": {"kind": "program", "parent_cpu": 3,
        "channels": {"ch": {}},
        "tasks": [
          {"name": "busy3", "cpus": "3", "program": [{"run": "1ms"}]},
          {"name": "P", "program": [{"wait": "ch"}, {"run": "10us"}]},
          {"name": "W", "cpus": "1", "program": [{"run": "2ms"}, {"post": "ch"}, {"run": "5us"}]},)" +
                       hog("hog0", 0) + R"(]},
      "policies": ["plain"], "run": {"duration": "3ms"}})");
    const Outcome r = simulate(d, "", 1);
    CHECK(r.wakee() == "P");
    CHECK(r.prev() == 0);
    const SisPrevEv* skipped = r.prev_skipped();
    REQUIRE(skipped != nullptr);
    const SisPrevEv seen = *skipped;
    CHECK(seen.prev == 0);
    // wake_affine_weight() may keep prev as the target: W and the hog both weigh about a full
    // nice-0 load (a new task starts with its weight as load_avg). Busy either way.
    CHECK((seen.why == PrevSkip::busy || seen.why == PrevSkip::is_target));
    CHECK(r.outcome() == SelectOutcome::sis_recent);
    CHECK(r.outcome_cpu() == 3);
    CHECK_FALSE(r.has<SelectIdleCpuEv>());
    CHECK(r.moves(0, 3));
    CHECK(r.n(Metric::select_sis_recent) == 1);
}

TEST_CASE("Row 20: with no idle core an idle SMT sibling of prev is picked before the LLC scan", "[wake_path][row20][row21]") {
    // One LLC of 4 cores x 2 threads (siblings adjacent: {0,1} {2,3} {4,5} {6,7}). Hogs on 0, 2, 6
    // and the waker on 4 leave every core half busy. P1 is woken first: has_idle_cores is
    // still set from boot, so an idle-core scan runs, finds no idle core, clears the hint and
    // returns the first idle thread (5); P1 then keeps CPU5 busy. P2 (prev 0) is woken next: the
    // hint is clear, so select_idle_smt returns prev's sibling 1, where the scan from the target
    // (4) would have returned 7. (P2 forks first, on CPU0; P1 forks on CPU0 or, if P2 has not
    // blocked yet, on the next idle core's CPU2: a hog runs on either at the wake.)
    const json d = doc(R"({"machine": {"topology": {"name": "smt", "cores_per_cluster": 4, "threads_per_core": 2},
                                       "profile": {"base": "kvm-2vcpu"}},
      "workload": {"kind": "program",
        "channels": {"c1": {"wake": {"flags": ["WF_SYNC"]}}, "c2": {"wake": {"flags": ["WF_SYNC"]}}},
        "tasks": [
          {"name": "P2", "program": [{"wait": "c2"}, {"run": "10us"}]},
          {"name": "P1", "program": [{"wait": "c1"}, {"loop": 0, "do": [{"run": "1ms"}]}]},
          {"name": "W", "cpus": "4", "program": [{"run": "1ms"}, {"post": "c1"}, {"run": "1ms"}, {"post": "c2"}, {"run": "5us"}]},)" +
                       hog("h0", 0) + "," + hog("h2", 2) + "," + hog("h6", 6) + R"(]},
      "policies": ["plain"], "run": {"duration": "3ms"}})");
    const Outcome w1 = simulate(d, "", 1);
    const int p1_prev = w1.prev();
    CHECK((p1_prev == 0 || p1_prev == 2));
    REQUIRE(w1.prev_skipped());
    CHECK(w1.prev_skipped()->prev == p1_prev);
    CHECK(w1.prev_skipped()->why == PrevSkip::busy);
    REQUIRE(w1.idle_scan());
    CHECK(w1.idle_scan()->idle_core_scan);
    CHECK(w1.idle_scan()->cpu >= 0);
    CHECK(w1.result_cpu() == 5);
    const Outcome w2 = simulate(d, "", 2);
    CHECK(w2.wakee() == "P2");
    CHECK(w2.prev() == 0);
    CHECK(w2.outcome() == SelectOutcome::sis_smt);
    CHECK(w2.outcome_cpu() == 1);
    CHECK(w2.moves(0, 1));
    CHECK(w2.n(Metric::select_sis_smt) == 1);
}

namespace {

// An 8-CPU LLC where P (prev 3) and CPUs 0, 1, 3, 4, 7 minus the waker's CPU are busy; W is pinned
// to `waker` and wakes P with WF_SYNC, so the target is the waker's CPU. CPUs 2 and 6 are idle.
json wrap_order(int waker) {
    std::string hogs;
    for (int c : {0, 1, 3, 4, 5, 7})
        if (c != waker) {
            hogs += ',';
            hogs += hog("h" + std::to_string(c), c);
        }
    return doc(R"({"machine": )" + flat(8) + R"(,
      "workload": {"kind": "program", "parent_cpu": 3,
        "channels": {"ch": {"wake": {"flags": ["WF_SYNC"]}}},
        "tasks": [
          {"name": "P", "program": [{"wait": "ch"}, {"run": "10us"}]},
          {"name": "W", "cpus": ")" + std::to_string(waker) +
               R"(", "program": [{"run": "1ms"}, {"post": "ch"}, {"run": "5us"}]})" + hogs + R"(]},
      "policies": ["plain"], "run": {"duration": "2ms"}})");
}

}  // namespace

TEST_CASE("Row 24: select_idle_cpu scans from target+1 and wraps around", "[wake_path][row24]") {
    const Outcome t5 = simulate(wrap_order(5), "", 1);
    REQUIRE(t5.sis());
    CHECK(t5.sis()->prev == 3);
    CHECK(t5.sis()->target == 5);
    CHECK(t5.moves(3, 6));
    const Outcome t1 = simulate(wrap_order(1), "", 1);
    REQUIRE(t1.sis());
    CHECK(t1.sis()->prev == 3);
    CHECK(t1.sis()->target == 1);
    CHECK(t1.moves(3, 2));
}

namespace {

// A full 2-CPU LLC: W pinned to CPU0 wakes P, whose prev CPU1 runs a hog.
// hog_nice: the hog's nice value (19: its deadline is far out, so a woken P preempts it).
json full_llc(const std::string& flags, const std::string& features = "{}", int hog_nice = 0) {
    return doc(R"({"machine": "kvm-2vcpu", "features": )" + features + R"(,
      "workload": {"kind": "program", "parent_cpu": 1,
        "channels": {"ch": {"wake": {"flags": )" + flags + R"(}}},
        "tasks": [
          {"name": "P", "program": [{"wait": "ch"}, {"run": "10us"}]},
          {"name": "W", "cpus": "0", "program": [{"run": "1ms"}, {"post": "ch"}, {"run": "5us"}]},
          {"name": "h1", "cpus": "1", "nice": )" + std::to_string(hog_nice) + R"(, "program": [{"loop": 0, "do": [{"run": "1ms"}]}]}]},
      "policies": ["plain"], "run": {"duration": "2ms"}})");
}

}  // namespace

TEST_CASE("Row 26: in a fully busy LLC a sync wakee stacks on the waker's CPU and a plain one stays on prev",
          "[wake_path][row26]") {
    const Outcome s = simulate(full_llc(kSync), "", 1);
    REQUIRE(s.idle_scan());
    CHECK(s.idle_scan()->cpu == -1);
    CHECK(s.outcome() == SelectOutcome::sis_fallback);
    CHECK(s.fallback() == SisFallback::target);
    CHECK(s.outcome_cpu() == 0);
    CHECK(s.moves(1, 0));
    // Without WF_SYNC, wake_affine_idle has no answer; with the weight comparison off the target
    // is prev and the fallback leaves P there.
    const Outcome p = simulate(full_llc(kNoFlags, R"({"WA_WEIGHT": false})"), "", 1);
    REQUIRE(p.wake_affine());
    CHECK(p.wake_affine()->idle == AffineIdle::no_decision);
    CHECK(p.wake_affine()->weight == AffineWeight::not_run);
    CHECK(p.outcome() == SelectOutcome::sis_fallback);
    CHECK(p.fallback() == SisFallback::target);
    CHECK(p.outcome_cpu() == 1);
    CHECK(p.stays_on(1));
    CHECK(p.n(Metric::select_sis_fallback) == 1);
}

TEST_CASE("Row 27: on big.LITTLE a task that fits neither littles nor mids skips them for the idle big CPU",
          "[wake_path][row27]") {
    // Short tasks on the littles make fork placement put P on a mid CPU (4), where it runs long
    // enough for util ~700 (> 80% of 768). W on little CPU1 wakes it (sync: target = CPU1);
    // select_idle_capacity scans from CPU1 past the idle littles and mids to CPU7.
    // b7 holds the big CPU until P blocks (P at about 310 ms, b7 until 337 ms, W posts at 366 ms),
    // so misfit balancing (an idle big CPU pulls a misfit task by active balance) does not move
    // P there before the wakeup.
    const json d = doc(R"({"machine": "bl-4-3-1",
      "workload": {"kind": "program", "parent_cpu": 4,
        "channels": {"ch": {"wake": {"flags": ["WF_SYNC"]}}},
        "tasks": [
          {"name": "b0", "cpus": "0", "program": [{"run": "1ms"}]},
          {"name": "b1", "cpus": "1", "program": [{"run": "1ms"}]},
          {"name": "b2", "cpus": "2", "program": [{"run": "1ms"}]},
          {"name": "b3", "cpus": "3", "program": [{"run": "1ms"}]},
          {"name": "b7", "cpus": "7", "program": [{"run": "160ms"}]},
          {"name": "P", "program": [{"run": "100ms"}, {"wait": "ch"}, {"run": "10us"}]},
          {"name": "W", "cpus": "1", "program": [{"run": "45ms"}, {"post": "ch"}, {"run": "5us"}]}]},
      "policies": ["plain"], "run": {"duration": "400ms"}})");
    const Outcome r = simulate(d, "", 1);
    CHECK(r.wakee() == "P");
    CHECK(r.prev() == 4);
    CHECK(r.waker() == "W");
    CHECK(r.this_cpu() == 1);
    CHECK(r.outcome() == SelectOutcome::sis_capacity);
    CHECK(r.outcome_cpu() == 7);
    CHECK(r.moves(4, 7));
    CHECK(r.n(Metric::select_sis_capacity) == 1);
}

TEST_CASE("Row 28: IPIs: none for a local wakeup, one for an idle CPU in the LLC, none for a busy one, one across LLCs",
          "[wake_path][row28]") {
    SECTION("local wakeups (WF_CURRENT_CPU pair) send no IPI") {
        const Outcome r = simulate(pingpong_stacked(kNoFlags, 50, R"(["seccomp_current_cpu"])"));
        CHECK(r.n(Metric::wakeups_remote) == 0);
        CHECK(r.n(Metric::ipis) == 0);
    }
    SECTION("a wakeup to an idle CPU in the LLC goes through its wake list with an IPI") {
        const Outcome r = simulate(pingpong(kNoFlags, 50, R"(["plain"])"));
        CHECK(r.n(Metric::wakeups_ipi) == r.n(Metric::wakeups));
        CHECK(r.n(Metric::ipis) == r.n(Metric::wakeups));
    }
    SECTION("a wakeup to a busy CPU in the LLC is a direct remote enqueue, and preempting there takes a reschedule IPI") {
        // P goes back to prev (CPU1), enqueued under CPU1's lock from CPU0 (no wake list); it
        // preempts the nice-19 hog (whose deadline lies far out), which resched_curr() asks of
        // CPU1 with an IPI: P runs only after ipi_latency (3.35 us on kvm-2vcpu, +-3% jitter),
        // not at the instant of the wakeup. (Against a nice-0 hog P's fresh deadline is later
        // than the hog's, and the wakeup check does not preempt.)
        const Outcome r = simulate(full_llc(kNoFlags, R"({"WA_WEIGHT": false})", 19));
        CHECK(r.n(Metric::wakeups_remote) == 1);
        CHECK(r.n(Metric::wakeups_ipi) == 0);
        CHECK(r.n(Metric::preemptions) == 1);
        CHECK(r.n(Metric::ipis) == 1);
        CHECK(r.n(Metric::wake_latency_ns_max) >= 3250);
    }
    SECTION("a wakeup to a busy CPU in another LLC still uses the wake list and an IPI") {
        const Outcome r = simulate(cross_node(32, true), "", 1);
        CHECK(r.stays_on(2));
        CHECK(r.n(Metric::wakeups_remote) == 1);
        CHECK(r.n(Metric::wakeups_ipi) == 1);
    }
}

TEST_CASE("Row 32: fork placement spreads tasks without counting migrations", "[wake_path][row32]") {
    const Outcome r = simulate(doc(R"({"machine": )" + flat(4) + R"(,
      "workload": {"kind": "program", "tasks": [{"name": "t", "count": 4, "program": [{"run": "2ms"}, {"op": 0}]}]},
      "policies": ["plain"]})"));
    REQUIRE(r.completed);
    for (int c = 0; c < 4; ++c) CHECK(r.util(c) > 0.9);
    CHECK(r.n(Metric::migrations) == 0);
    CHECK(r.n(Metric::wakeups) == 0);
}

TEST_CASE("Fork placement keeps new tasks on the parent's node while it runs at most imb_numa_nr of them",
          "[wake_path][fork][numa]") {
    // xeon-2s-16c32t: imb_numa_nr 2. CPU hogs forked from CPU0 a few us apart. Without the
    // allowance the second would go to node 1 (more idle CPUs there); with it the first two stay
    // on node 0 (allow_numa_imbalance) and only the third spreads.
    auto hogs = [](int n) {
        std::string tasks;
        for (int i = 0; i < n; ++i)
            tasks += std::string(i ? "," : "") + R"({"name": "h)" + std::to_string(i) + R"(", "program": [{"run": "2ms"}]})";
        return simulate(doc(R"({"machine": "xeon-2s-16c32t", "workload": {"kind": "program", "parent_cpu": 0,
                                "tasks": [)" + tasks + R"(]}, "policies": ["plain"], "run": {"seeds": [1]}})"));
    };
    const Topology t = make_topology_preset("xeon-2s-16c32t");
    auto node_util = [&](const Outcome& o, int node) {
        double u = 0;
        for (int c = 0; c < t.nr_cpus(); ++c) u += t.cpu(c).node == node ? o.util(c) : 0;
        return u;
    };
    const Outcome two = hogs(2);
    CHECK(node_util(two, 1) == 0);
    CHECK(node_util(two, 0) > 0);
    const Outcome three = hogs(3);
    CHECK(node_util(three, 0) == Approx(2 * node_util(three, 1)).epsilon(0.05));
}

TEST_CASE("Fork placement takes the idle CPU in the shallowest idle state before a more recently idled one",
          "[wake_path][fork][cpuidle]") {
    // sched_balance_find_dst_group_cpu(): two cores of two threads (core 0 = CPUs 0 and 2, core 1 =
    // CPUs 1 and 3) with the Xeon's idle states. CPU 0 runs the parent side; CPU 1 idled in C1
    // after a run of short sleeps (ending at 14.7 ms, so that no more than one tick's period is
    // in menu's last eight by 20 ms); CPU 3 idled later, in C6, after one long run. A fork from CPU 0
    // goes to the idle core 1, and within it to CPU 1: the smaller exit latency wins over the later
    // idle_stamp (which alone picked CPU 3).
    const json d = doc(R"({"machine": {"topology": {"name": "2c2t", "cores_per_cluster": 2, "threads_per_core": 2,
                                                    "numbering": "siblings_split"},
                                       "profile": {"base": "xeon-2s-16c32t"}},
      "workload": {"kind": "program", "parent_cpu": 0, "tasks": [
        {"name": "parent", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
        {"name": "short-sleeps", "cpus": "1", "program": [{"loop": 400, "do": [{"run": "5us"}, {"sleep": "20us"}]}, {"sleep": "10s"}]},
        {"name": "long-run", "cpus": "3", "program": [{"run": "12ms"}, {"sleep": "10s"}]},
        {"name": "child", "program": [{"sleep": "10s"}]}]},
      "policies": ["plain"], "run": {"seeds": [1]}})");
    testutil::FuseSim sim(d);
    sim.engine.run_until(20 * kNsPerMs);
    REQUIRE(sim.sched.available_idle_cpu(1));
    REQUIRE(sim.sched.available_idle_cpu(3));
    const int64_t exit1 = sim.cpus().idle_exit_latency(1), exit3 = sim.cpus().idle_exit_latency(3);
    INFO("exit latency: CPU 1 " << exit1 << " ns, CPU 3 " << exit3 << " ns");
    REQUIRE(exit1 >= 0);
    REQUIRE(exit1 < exit3);
    const Task* child = nullptr;
    for (int i = 0; i < sim.sched.nr_tasks(); ++i)
        if (sim.sched.task(i).comm == "child") child = &sim.sched.task(i);
    REQUIRE(child != nullptr);
    CHECK(sim.sched.sched_balance_find_dst_cpu(*child, 0, 0, SD_BALANCE_FORK) == 1);
}

namespace {

// The forked task `child` (asleep) of a run advanced to `at`: where sched_balance_find_dst_cpu()
// would place it, forked from CPU 0.
int fork_target(const json& d, Time at) {
    testutil::FuseSim sim(d);
    sim.engine.run_until(at);
    for (int i = 0; i < sim.sched.nr_tasks(); ++i)
        if (sim.sched.task(i).comm == "child") return sim.sched.sched_balance_find_dst_cpu(sim.sched.task(i), 0, 0, SD_BALANCE_FORK);
    return -2;
}

// The "cpus" list of a hand-built topology: {core, cluster, llc, node} per CPU in id order (the
// package is the node).
std::string cpus_json(std::initializer_list<std::array<int, 4>> cpus) {
    std::string s;
    int id = 0;
    for (const auto& c : cpus) {
        s += std::string(id ? ", " : "") + R"({"id": )" + std::to_string(id) + R"(, "core": )" + std::to_string(c[0]) +
             R"(, "cluster": )" + std::to_string(c[1]) + R"(, "llc": )" + std::to_string(c[2]) + R"(, "package": )" +
             std::to_string(c[3]) + R"(, "node": )" + std::to_string(c[3]) + "}";
        ++id;
    }
    return "[" + s + "]";
}

}  // namespace

TEST_CASE("With every CPU busy, a fork goes to the group with the lowest average load, not the one running fewer tasks",
          "[wake_path][fork]") {
    // sched_balance_find_dst_group(): two LLCs of two CPUs. LLC 0 (the parent's) runs three nice-0
    // hogs, LLC 1 four nice-19 hogs: both groups overloaded, and LLC 1's average load is a
    // fiftieth of LLC 0's, so the child goes there although it runs more tasks.
    auto nice19 = [](const std::string& name, int cpu) {
        return R"({"name": ")" + name + R"(", "cpus": ")" + std::to_string(cpu) +
               R"(", "nice": 19, "program": [{"loop": 0, "do": [{"run": "1ms"}]}]})";
    };
    const json d = doc(R"({"machine": {"topology": {"name": "2llc", "llcs_per_node": 2, "cores_per_cluster": 2}, "profile": {"base": "xeon-2s-16c32t"}},
      "workload": {"kind": "program", "tasks": [)" + hog("a1", 0) + "," + hog("a2", 0) + "," + hog("a3", 1) + "," +
                       nice19("b1", 2) + "," + nice19("b2", 2) + "," + nice19("b3", 3) + "," + nice19("b4", 3) + R"(,
        {"name": "child", "program": [{"sleep": "10s"}]}]},
      "policies": ["plain"], "run": {"seeds": [1]}})");
    const int cpu = fork_target(d, 200 * kNsPerMs);
    CHECK((cpu == 2 || cpu == 3));
}

TEST_CASE("On big.LITTLE a task whose uclamp_min no little CPU meets is forked onto a big one (group_misfit_task)",
          "[wake_path][fork][asym]") {
    // bl-4-3-1, every CPU idle: the little cluster, the parent's, has the most idle CPUs, but a
    // task boosted to 512 fits none of its capacity-160 CPUs, so the fork balancer classifies it
    // group_misfit_task and takes the idlest group the task fits: the big cluster. Unboosted,
    // the child stays on the littles.
    auto child_in = [](const std::string& uclamp) {
        return doc(R"({"machine": "bl-4-3-1", "groups": {"top-app": {"uclamp_min": )" + uclamp + R"(}},
          "workload": {"kind": "program", "tasks": [{"name": "child", "group": "top-app", "program": [{"sleep": "10s"}]}]},
          "policies": ["plain"], "run": {"seeds": [1]}})");
    };
    const int boosted = fork_target(child_in("512"), 50 * kNsPerMs);
    CHECK(boosted >= 4);
    CHECK(boosted <= 6);
    const int plain = fork_target(child_in("0"), 50 * kNsPerMs);
    CHECK(plain >= 0);
    CHECK(plain <= 3);
}

TEST_CASE("Fork placement counts only the CPUs the child may use: idle CPUs it cannot run on do not draw it",
          "[wake_path][fork][affinity]") {
    // update_sg_wakeup_stats() since "sched/fair: Only update stats for allowed CPUs when looking
    // for dst group" (Adam Li, 6.19): two LLCs of three CPUs. Hogs run on CPUs 0 and 1 (the
    // parent's LLC, one idle CPU left, 2) and on CPU 3; the child may run on CPUs 0-3 only. LLC 1
    // has two idle CPUs, 4 and 5, but not for the child: counted, they drew it onto busy CPU 3.
    const json d = doc(R"({"machine": {"topology": {"name": "2llc3", "llcs_per_node": 2, "cores_per_cluster": 3}, "profile": {"base": "xeon-2s-16c32t"}},
      "workload": {"kind": "program", "tasks": [)" + hog("a0", 0) + "," + hog("a1", 1) + "," + hog("b3", 3) + R"(,
        {"name": "child", "cpus": "0-3", "program": [{"sleep": "10s"}]}]},
      "policies": ["plain"], "run": {"seeds": [1]}})");
    CHECK(fork_target(d, 50 * kNsPerMs) == 2);
}

TEST_CASE("On big.LITTLE a child that fits only the busy big CPU goes to the mid cluster, the larger of two misfit groups",
          "[wake_path][fork][asym]") {
    // bl-4-3-1: two hogs overload the big CPU 7; a child boosted to uclamp_min 900 fits no little
    // (160) and no mid (768) CPU, so the littles (the parent's group) and the mids are both
    // group_misfit_task. sched_balance_find_dst_group() then takes the group of higher max
    // capacity: the mids (staying on the littles was the model's old answer).
    const json d = doc(R"({"machine": "bl-4-3-1", "groups": {"top-app": {"uclamp_min": 900}},
      "workload": {"kind": "program", "tasks": [)" + hog("big1", 7) + "," + hog("big2", 7) + R"(,
        {"name": "child", "group": "top-app", "program": [{"sleep": "10s"}]}]},
      "policies": ["plain"], "run": {"seeds": [1]}})");
    const int cpu = fork_target(d, 50 * kNsPerMs);
    CHECK(cpu >= 4);
    CHECK(cpu <= 6);
}

TEST_CASE("Fork placement descends from the new CPU's own domains, which can be more than the parent's",
          "[wake_path][fork][topology]") {
    // Two nodes: node 0 has two SMT cores (SMT, MC and NUMA domains), node 1 two plain cores (MC,
    // NUMA). Hogs fill node 1 and CPU 0; CPU 1 idled last (its task ran longer than those of
    // CPUs 2 and 3). A fork from CPU 4 moves at the NUMA level to node 0, onto its most recently
    // idled CPU, 1, and goes on from that CPU's next narrower domain, MC, as
    // sched_balance_find_dst_cpu() walks for_each_domain(new_cpu) by span weight: there the idle
    // core (CPUs 2 and 3) wins over CPU 1's, whose sibling runs a hog. Counting levels from the
    // parent's side went on at CPU 1's SMT level and left the child beside the hog.
    const std::string cpus = cpus_json({{0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {2, 1, 1, 1}, {3, 2, 1, 1}});
    const json d = doc(R"({"machine": {"topology": {"name": "uneven", "cpus": )" + cpus + R"(,
          "node_distance": [[10, 20], [20, 10]]}, "profile": {"base": "xeon-2s-16c32t"}},
      "workload": {"kind": "program", "tasks": [)" + hog("h0", 0) + "," + hog("h4", 4) + "," + hog("h5", 5) + R"(,
        {"name": "late", "cpus": "1", "program": [{"run": "20ms"}, {"sleep": "10s"}]},
        {"name": "early2", "cpus": "2", "program": [{"run": "1ms"}, {"sleep": "10s"}]},
        {"name": "early3", "cpus": "3", "program": [{"run": "1ms"}, {"sleep": "10s"}]},
        {"name": "child", "program": [{"sleep": "10s"}]}]},
      "policies": ["plain"], "run": {"seeds": [1]}})");
    testutil::FuseSim sim(d);
    const auto& dom = sim.sched.domains();
    REQUIRE(dom.of(1).levels.size() == 3);
    REQUIRE(dom.of(4).levels.size() == 2);
    sim.engine.run_until(50 * kNsPerMs);
    REQUIRE(sim.sched.available_idle_cpu(1));
    const Task* child = nullptr;
    for (int i = 0; i < sim.sched.nr_tasks(); ++i)
        if (sim.sched.task(i).comm == "child") child = &sim.sched.task(i);
    REQUIRE(child != nullptr);
    const int cpu = sim.sched.sched_balance_find_dst_cpu(*child, 4, 4, SD_BALANCE_FORK);
    CHECK((cpu == 2 || cpu == 3));
}

TEST_CASE("An idle prev whose cluster level degenerated shares resources with the LLC's cluster (cpus_share_resources)",
          "[wake_path][cluster]") {
    // One LLC: CPUs 0-3 form a cluster, CPU 4 is a cluster of its own, so its cluster level
    // degenerates and its sd_share_id is the LLC's, the same as the cluster's first CPU
    // (bl-4-3-1's big CPU is such a CPU). W, pinned to CPU 1, wakes P with WF_SYNC: the target is
    // CPU 1, busy, and P's prev, CPU 4, is idle. select_idle_sibling() returns prev, since
    // cpus_share_resources(4, 1) holds; comparing the topology's cluster numbers deferred it and
    // the cluster scan took idle CPU 0.
    const std::string cpus = cpus_json({{0, 0, 0, 0}, {1, 0, 0, 0}, {2, 0, 0, 0}, {3, 0, 0, 0}, {4, 1, 0, 0}});
    const json d = doc(R"({"machine": {"topology": {"name": "lone", "cpus": )" + cpus +
                       R"(}, "profile": {"base": "xeon-2s-16c32t"}},
      "workload": {"kind": "program", "parent_cpu": 4,
        "channels": {"ch": {"wake": {"flags": ["WF_SYNC"]}}},
        "tasks": [
          {"name": "W", "cpus": "1", "program": [{"run": "50us"}, {"post": "ch"}, {"run": "5us"}]},
          {"name": "P", "cpus": "0,1,4", "program": [{"wait": "ch"}, {"run": "10us"}]}]},
      "policies": ["plain"]})");
    const Outcome r = simulate(d, "", 1);
    CHECK(r.outcome() == SelectOutcome::sis_prev);
    CHECK(r.outcome_cpu() == 4);
}

TEST_CASE("SIS_UTIL: a fruitless pass over target's cluster spends one probe per CPU of the cluster", "[wake_path][cluster][sis]") {
    // select_idle_cpu() on one LLC of two 4-CPU clusters, every CPU busy but 7, nr_idle_scan 8
    // (nr 9): the cluster pass probes CPUs 1, 2, 3 and 0 (nr 9 -> 5), then the LLC scan probes 4, 5,
    // 6 and finds 7 with its last probe. Charging the fruitless pass one probe more left the scan
    // short of CPU 7.
    const std::string cpus =
        cpus_json({{0, 0, 0, 0}, {1, 0, 0, 0}, {2, 0, 0, 0}, {3, 0, 0, 0}, {4, 1, 0, 0}, {5, 1, 0, 0}, {6, 1, 0, 0}, {7, 1, 0, 0}});
    std::string hogs;
    for (int c = 0; c < 7; ++c) hogs += std::string(c ? "," : "") + hog("h" + std::to_string(c), c);
    const json d = doc(R"({"machine": {"topology": {"name": "2x4", "cpus": )" + cpus +
                       R"(}, "profile": {"base": "xeon-2s-16c32t"}},
      "workload": {"kind": "program", "tasks": [)" + hogs + R"(, {"name": "P", "program": [{"sleep": "10s"}]}]},
      "policies": ["plain"], "run": {"seeds": [1]}})");
    testutil::FuseSim sim(d);
    sim.engine.run_until(20 * kNsPerMs);
    REQUIRE(sim.sched.available_idle_cpu(7));
    for (int c = 0; c < 7; ++c) REQUIRE_FALSE(sim.sched.available_idle_cpu(c));
    const Task* p = nullptr;
    for (int i = 0; i < sim.sched.nr_tasks(); ++i)
        if (sim.sched.task(i).comm == "P") p = &sim.sched.task(i);
    REQUIRE(p != nullptr);
    sim.sched.set_nr_idle_scan(0, 8);
    int probes = 0;
    CHECK(sim.sched.select_idle_cpu(*p, 0, false, 0, probes) == 7);
    CHECK(probes == 8);
}
