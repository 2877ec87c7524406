// Wake policies (policies/*.cpp and checklist rows 41-42), the
// wakeup accounting, scheduler invariants on a busy run, and determinism.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/simulation.h"
#include "kernel/observer.h"
#include "kernel/wake_flags.h"
#include "sim_test_util.h"

using namespace wakesim;
using namespace wakesim::testutil;
using json = nlohmann::json;

namespace {

// A requester R and a server S (roles as the policies see them) ping-pong `loops` times; the
// server takes `service` per request. Both wake sites are sync-capable request/reply sites whose
// mainline flags are `flags`. Extra tasks are appended.
json request_reply(const std::string& flags, int loops, const std::string& service, const std::string& policies,
                   const std::string& machine = R"("kvm-2vcpu")", const std::string& extra = "",
                   const std::string& run = "{}") {
    const std::string site = R"("flags": )" + flags + R"(, "sync_capable": true)";
    const std::string l = std::to_string(loops);
    return doc(R"({"machine": )" + machine + R"(,
      "workload": {"kind": "program",
        "channels": {"req": {"wake": {)" + site + R"(, "role": "request"}},
                     "rep": {"wake": {)" + site + R"(, "role": "reply"}}},
        "tasks": [
          {"name": "R", "role": "requester", "program": [{"loop": )" + l +
               R"(, "do": [{"run": "5us"}, {"post": "req"}, {"wait": "rep"}, {"op": 0}]}]},
          {"name": "S", "role": "server", "program": [{"loop": )" + l + R"(, "do": [{"wait": "req"}, {"run": ")" +
               service + R"("}, {"post": "rep"}]}]})" + extra + R"(]},
      "policies": )" + policies + R"(, "run": )" + run + "}");
}

const std::string kSeesawVariants = R"([
    "plain",
    {"name": "one_bit", "use": "seesaw", "params": {"variant": "one_bit"}},
    {"name": "two_bits", "use": "seesaw", "params": {"variant": "two_bits"}},
    {"name": "pair_id", "use": "seesaw", "params": {"variant": "pair_id"}},
    {"name": "recent_block", "use": "seesaw", "params": {"variant": "recent_block", "window": "40ms"}},
    {"name": "rfc_jiffies", "use": "seesaw", "params": {"variant": "rfc_jiffies"}}])";

}  // namespace

// ---------------------------------------------------------------------------------------------
// wf_sync, seccomp_current_cpu

TEST_CASE("wf_sync adds WF_SYNC at sync-capable sites only", "[policies][wf_sync]") {
    // Sync-capable sites without WF_SYNC in mainline: plain wakes from the idle target (step 1);
    // with WF_SYNC wake_affine picks the waker's CPU and step 2 returns the idle prev instead.
    const json d = request_reply("[]", 50, "5us", R"(["plain", "wf_sync"])");
    const Outcome plain = simulate(d, "plain", 1);
    const Outcome sync = simulate(d, "wf_sync", 1);
    CHECK(plain.flags() == WF_TTWU);
    CHECK(sync.flags() == static_cast<uint32_t>(WF_TTWU | WF_SYNC));
    CHECK(plain.n(Metric::select_sis_target) == plain.n(Metric::wakeups));
    CHECK(sync.n(Metric::select_sis_prev) == sync.n(Metric::wakeups));
    // Neither stacks the pair on an idle LLC.
    CHECK(plain.n(Metric::migrations) == 0);
    CHECK(sync.n(Metric::migrations) == 0);

    // A site that is not sync-capable is left alone.
    json other = d;
    for (const char* ch : {"req", "rep"}) other["workload"]["channels"][ch]["wake"]["sync_capable"] = false;
    CHECK(simulate(other, "wf_sync").m == simulate(other, "plain").m);
}

TEST_CASE("no_sync drops WF_SYNC where mainline sets it, the reciprocal-sync thread's experiment", "[policies][no_sync]") {
    // Sites that wake with WF_SYNC in mainline, as a pipe does: plain takes wake_affine's sync
    // rule (the waker's CPU, then step 2 returns the idle prev); no_sync wakes as a plain
    // wake_up and select_idle_sibling keeps the idle target (step 1), as wf_sync's test shows
    // the other way round.
    const json d = request_reply(R"(["WF_SYNC"])", 50, "5us", R"(["plain", "no_sync"])");
    const Outcome plain = simulate(d, "plain", 1);
    const Outcome nosync = simulate(d, "no_sync", 1);
    CHECK(plain.flags() == static_cast<uint32_t>(WF_TTWU | WF_SYNC));
    CHECK(nosync.flags() == WF_TTWU);
    CHECK(plain.n(Metric::select_sis_prev) == plain.n(Metric::wakeups));
    CHECK(nosync.n(Metric::select_sis_target) == nosync.n(Metric::wakeups));
    // Sites without the hint in mainline are the same with and without the policy.
    const json none = request_reply("[]", 50, "5us", R"(["plain", "no_sync"])");
    CHECK(simulate(none, "no_sync").m == simulate(none, "plain").m);
}

TEST_CASE("seccomp_current_cpu only changes request and reply sites", "[policies][seccomp_current_cpu]") {
    json d = request_reply("[]", 50, "5us", R"(["plain", "seccomp_current_cpu"])");
    for (const char* ch : {"req", "rep"}) d["workload"]["channels"][ch]["wake"]["role"] = "generic";
    const Outcome w = simulate(d, "seccomp_current_cpu");
    CHECK(w.n(Metric::select_current_cpu) == 0);
    CHECK(w.m == simulate(d, "plain").m);
}

// ---------------------------------------------------------------------------------------------
// seesaw (row 42)

TEST_CASE("Row 42: seesaw leaves unmarked tasks on the normal path under every variant", "[policies][seesaw][row42]") {
    // Roles "other" and no pair id: no variant recognises the pair.
    json d = request_reply("[]", 50, "5us", kSeesawVariants, flat(4));
    for (auto& t : d["workload"]["tasks"]) t["role"] = "other";
    const Outcome plain = simulate(d, "plain");
    for (const char* v : {"one_bit", "two_bits", "pair_id", "recent_block", "rfc_jiffies"}) {
        INFO("variant " << v);
        const Outcome s = simulate(d, v);
        CHECK(s.n(Metric::select_policy_early) == 0);
        CHECK(s.m == plain.m);
    }
}

TEST_CASE("Row 42: seesaw one_bit and pair_id pull both directions of a marked pair onto the waker's CPU",
          "[policies][seesaw][row42]") {
    // perf bench sched pipe marks its two tasks requester/server with pair id 1.
    const json d = doc(R"({"machine": )" + flat(4) + R"(, "workload": {"kind": "pipe", "loops": 200},
                           "policies": )" + kSeesawVariants + "}");
    const Outcome plain = simulate(d, "plain");
    CHECK(plain.n(Metric::select_policy_early) == 0);
    CHECK(plain.n(Metric::ipis) == plain.n(Metric::wakeups));
    for (const char* v : {"one_bit", "pair_id"}) {
        INFO("variant " << v);
        const Outcome s = simulate(d, v);
        REQUIRE(s.completed);
        CHECK(s.n(Metric::select_policy_early) > 0);
        // Every wakeup is the rule's or finds the wakee still queued: nothing reaches the fair path.
        CHECK(s.n(Metric::select_policy_early) + s.n(Metric::wakeups_no_placement) == s.n(Metric::wakeups));
        CHECK(s.n(Metric::wakeups_remote) == 0);
        CHECK(s.n(Metric::ipis) == 0);
        CHECK(s.n(Metric::migrations) <= 1);
        CHECK(std::max(s.util(0), s.util(1)) > 0.95);
    }
}

TEST_CASE("Row 42: seesaw pair_id pulls a program's requester and server only when they share a pair id",
          "[policies][seesaw][row42]") {
    // A program task has no pair unless its "pair" says so; one with a fuse step pairs with its
    // connection's servers (as fio's jobs do).
    json d = request_reply("[]", 50, "5us", kSeesawVariants, flat(4));
    const Outcome plain = simulate(d, "plain");
    const Outcome none = simulate(d, "pair_id");
    CHECK(none.n(Metric::select_policy_early) == 0);
    CHECK(none.m == plain.m);
    for (auto& t : d["workload"]["tasks"]) t["pair"] = 7;
    const Outcome paired = simulate(d, "pair_id");
    REQUIRE(paired.completed);
    CHECK(paired.n(Metric::select_policy_early) + paired.n(Metric::wakeups_no_placement) == paired.n(Metric::wakeups));
    CHECK(paired.n(Metric::ipis) == 0);
    // Two different ids are no pair.
    d["workload"]["tasks"][1]["pair"] = 8;
    CHECK(simulate(d, "pair_id").n(Metric::select_policy_early) == 0);
}

TEST_CASE("Row 42: seesaw two_bits pulls only the requester to the processing thread", "[policies][seesaw][row42]") {
    // p.seesaw_req and current.seesaw_proc: only the reply wake (server wakes requester) matches.
    const json d = doc(R"({"machine": )" + flat(4) + R"(, "workload": {"kind": "pipe", "loops": 100},
                           "policies": )" + kSeesawVariants + "}");
    const Outcome s = simulate(d, "two_bits");
    REQUIRE(s.completed);
    CHECK(s.n(Metric::select_policy_early) > 0);
    CHECK(s.n(Metric::select_policy_early) <= s.n(Metric::ops));
    int requests = 0, replies = 0;
    for (uint64_t nth = 1; nth <= 12; ++nth) {
        const Outcome w = simulate(d, "two_bits", nth);
        if (w.wakee() == "sched-pipe-1") {  // the server: a request wake
            ++requests;
            CHECK_FALSE(w.has<PolicyRuleEv>());
        } else if (w.wakee() == "sched-pipe-0") {  // the requester: a reply wake
            ++replies;
            REQUIRE(w.policy_rule());
            CHECK(w.policy_rule()->rule == "seesaw");
            CHECK(w.policy_rule()->hook == PolicyHook::early);
            CHECK(w.outcome() == SelectOutcome::policy_early);
        }
    }
    CHECK(requests > 0);
    CHECK(replies > 0);
}

TEST_CASE("Row 42: seesaw recent_block applies only within the window after the requester blocked",
          "[policies][seesaw][row42]") {
    const std::string pols = R"([{"name": "window40", "use": "seesaw", "params": {"variant": "recent_block", "window": "40ms"}}])";
    // Fast server: every reply comes well within 40 ms of the requester's mark.
    const Outcome fast = simulate(request_reply("[]", 6, "20us", pols), "window40");
    CHECK(fast.n(Metric::select_policy_early) > 0);
    // Slow server (50 ms per request): the mark has expired by the reply.
    const Outcome slow = simulate(request_reply("[]", 6, "50ms", pols, R"("kvm-2vcpu")", "", R"({"duration": "1s"})"), "window40");
    REQUIRE(slow.completed);
    CHECK(slow.n(Metric::select_policy_early) == 0);
}

TEST_CASE("Row 42: seesaw rfc_jiffies, the RFC's rule, pulls only a requester that has not waited for 10 jiffies",
          "[policies][seesaw][row42]") {
    // The RFC stamps the requester when its wait returns and fires once time_after(jiffies,
    // stamp + 10): a requester that waits for every request is stamped every round trip.
    const std::string pols = R"([{"name": "rfc", "use": "seesaw", "params": {"variant": "rfc_jiffies"}}])";
    const Outcome fast = simulate(request_reply("[]", 50, "20us", pols), "rfc");
    REQUIRE(fast.completed);
    CHECK(fast.n(Metric::select_policy_early) == 0);
    CHECK(fast.m == simulate(request_reply("[]", 50, "20us", R"(["plain"])"), "plain").m);
    // A 50 ms request is 12.5 jiffies at kvm-2vcpu's CONFIG_HZ=250: each reply finds the stamp
    // more than 10 jiffies old and pulls the requester to the server's CPU.
    const Outcome slow = simulate(request_reply("[]", 6, "50ms", pols, R"("kvm-2vcpu")", "", R"({"duration": "1s"})"), "rfc");
    REQUIRE(slow.completed);
    CHECK(slow.n(Metric::select_policy_early) >= 5);
    // With 20 jiffies the same 50 ms requests are too short.
    const std::string pols20 = R"([{"name": "rfc20", "use": "seesaw", "params": {"variant": "rfc_jiffies", "jiffies": 20}}])";
    const Outcome slow20 = simulate(request_reply("[]", 6, "50ms", pols20, R"("kvm-2vcpu")", "", R"({"duration": "1s"})"), "rfc20");
    CHECK(slow20.n(Metric::select_policy_early) == 0);
}

// ---------------------------------------------------------------------------------------------
// reciprocal_sync (row 41): the traces are in test_wake_path.cpp; here the guards.

TEST_CASE("Row 41: reciprocal_sync does not fire when the waker is not alone on its CPU", "[policies][reciprocal_sync][row41]") {
    // A third task pinned to each CPU keeps both runqueues at two runnable tasks whenever the pair
    // wakes each other, so "nr_running - delayed == 1" fails.
    const std::string spin = R"(, {"name": "s0", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
                                  {"name": "s1", "cpus": "1", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]})";
    const Outcome r = simulate(request_reply(R"(["WF_SYNC"])", 20, "5us", R"(["reciprocal_sync"])", R"("kvm-2vcpu")", spin,
                                             R"({"duration": "400ms"})"));
    CHECK(r.n(Metric::ops) == 20);
    CHECK(r.n(Metric::select_policy_affine) == 0);
}

// ---------------------------------------------------------------------------------------------
// migrate_disable_wait, prev_cpu, sched_idle_server

namespace {

// The requester starts on CPU0, where a hog is pinned; the server starts on CPU1. Reply wakes are
// WF_SYNC, so plain pulls the requester next to the server, away from the hog.
json requester_next_to_hog(const std::string& policies) {
    return request_reply(R"(["WF_SYNC"])", 50, "5us", policies, R"("kvm-2vcpu")",
                         R"(, {"name": "hog", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]})",
                         R"({"duration": "50ms"})");
}

}  // namespace

TEST_CASE("migrate_disable_wait: a waiting requester is woken where it slept and never migrates",
          "[policies][migrate_disable_wait]") {
    const json d = requester_next_to_hog(R"(["plain", "migrate_disable_wait"])");
    const Outcome plain = simulate(d, "plain");
    CHECK(plain.n(Metric::ops) == 50);
    CHECK(plain.n(Metric::migrations) >= 1);  // plain lets the requester escape the hog
    const Outcome md = simulate(d, "migrate_disable_wait");
    CHECK(md.n(Metric::ops) == 50);
    CHECK(md.n(Metric::migrations) == 0);
    CHECK(md.n(Metric::select_pinned) > 0);
    // A reply wake of the requester that needs a placement skips the fair class.
    bool saw = false;
    for (uint64_t nth = 1; nth <= 30 && !saw; ++nth) {
        const Outcome w = simulate(d, "migrate_disable_wait", nth);
        const PinnedEv* pinned = w.pinned();
        if (pinned && pinned->migration_disabled) {
            saw = true;
            CHECK(w.stays_on(0));
            CHECK_FALSE(w.fair());
        }
    }
    CHECK(saw);
}

TEST_CASE("prev_cpu: always returns the wakee's prev, if_idle only when prev is idle", "[policies][prev_cpu]") {
    const std::string pols =
        R"(["plain", "prev_cpu", {"name": "prev_if_idle", "use": "prev_cpu", "params": {"mode": "if_idle"}}])";
    // Next to the hog: "always" keeps the requester on its busy prev (no migration at all); every
    // placement is the rule's.
    const json busy = requester_next_to_hog(pols);
    const Outcome always = simulate(busy, "prev_cpu");
    CHECK(always.n(Metric::ops) == 50);
    CHECK(always.n(Metric::migrations) == 0);
    CHECK(always.n(Metric::select_policy_early) > 0);
    CHECK(always.n(Metric::select_policy_early) + always.n(Metric::wakeups_no_placement) == always.n(Metric::wakeups));
    // "if_idle" does not keep the requester next to the hog: its prev is busy, so the kernel path
    // runs and the requester escapes as under plain.
    const Outcome if_idle = simulate(busy, "prev_if_idle");
    CHECK(if_idle.n(Metric::select_policy_early) < always.n(Metric::select_policy_early));
    CHECK(if_idle.n(Metric::migrations) >= 1);
    // On an idle machine every prev is idle when its task is woken: "if_idle" takes every wakeup.
    const Outcome idle = simulate(request_reply("[]", 50, "5us", pols), "prev_if_idle");
    CHECK(idle.n(Metric::migrations) == 0);
    CHECK(idle.n(Metric::select_policy_early) == idle.n(Metric::wakeups));
}

TEST_CASE("sched_idle_server: a CPU running only the server counts as idle for placement", "[policies][sched_idle_server][row17]") {
    // W (pinned to CPU0) wakes P, forked on CPU0; the server computes on CPU1.
    const json d = doc(R"({"machine": "kvm-2vcpu",
      "workload": {"kind": "program", "channels": {"ch": {}},
        "tasks": [
          {"name": "P", "program": [{"wait": "ch"}, {"run": "10us"}]},
          {"name": "W", "cpus": "0", "program": [{"run": "100us"}, {"post": "ch"}, {"run": "50us"}]},
          {"name": "server", "role": "server", "cpus": "1", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]}]},
      "policies": ["plain", "sched_idle_server"], "run": {"duration": "5ms"}})");
    const Outcome plain = simulate(d, "plain", 1);
    CHECK(plain.stays_on(0));
    const Outcome si = simulate(d, "sched_idle_server", 1);
    CHECK(si.moves(0, 1));
    CHECK(si.n(Metric::preemptions) >= 1);
}

// ---------------------------------------------------------------------------------------------
// Accounting, invariants, determinism

TEST_CASE("Every wakeup is counted as local or remote, as ttwu_stat does", "[wake_path][accounting]") {
    // A stacked WF_CURRENT_CPU pair often wakes a partner that has set itself to sleep but not yet
    // reached schedule() (ttwu_runnable): those are local wakeups too.
    const Outcome r = simulate(request_reply("[]", 100, "5us", R"(["seccomp_current_cpu"])"));
    REQUIRE(r.completed);
    CHECK(r.n(Metric::wakeups_no_placement) > 0);
    CHECK(r.n(Metric::wakeups_local) + r.n(Metric::wakeups_remote) == r.n(Metric::wakeups));
    CHECK(r.n(Metric::wakeups_remote) == 0);
}

TEST_CASE("A busy messaging run with hogs keeps the scheduler's invariants and consumes every message",
          "[wake_path][invariants]") {
    const json d = doc(R"({"machine": "xeon-2s-16c32t",
      "workload": {"kind": "messaging", "groups": 2, "fds": 4, "loops": 20, "hogs": {"count": 6}},
      "policies": ["plain", "wf_sync", "reciprocal_sync"], "run": {"duration": "2s"}})");
    for (const char* p : {"plain", "wf_sync", "reciprocal_sync"}) {
        INFO("policy " << p);
        const Outcome r = simulate(d, p);  // check_invariants throws on a violation
        // The receivers read every message (2 groups x 4 senders x 4 receivers x 20 loops).
        REQUIRE(r.completed);
        CHECK(r.n(Metric::ops) == 2 * 4 * 4 * 20);
        // CPU time adds up: no CPU busier than the window, and at most 32 CPUs' worth in all.
        double sum = 0;
        for (int c = 0; c < 32; ++c) {
            CHECK(r.util(c) >= 0.0);
            CHECK(r.util(c) <= 1.0);
            sum += r.util(c);
        }
        CHECK(sum <= 32.0);
        CHECK(r.m.get(Metric::cpu_util_sum) == Approx(sum).margin(1e-4));
        CHECK(r.n(Metric::wakeups_local) + r.n(Metric::wakeups_remote) == r.n(Metric::wakeups));
        CHECK(r.n(Metric::migrations) == r.n(Metric::migrations_wakeup) + r.n(Metric::migrations_balance) +
                                             r.n(Metric::migrations_newidle) + r.n(Metric::migrations_active));
        CHECK(r.n(Metric::select_pinned) + r.n(Metric::select_policy_early) + r.n(Metric::select_current_cpu) +
                  r.n(Metric::select_policy_affine) + r.n(Metric::select_sis_target) + r.n(Metric::select_sis_prev) +
                  r.n(Metric::select_sis_kthread) + r.n(Metric::select_sis_recent) + r.n(Metric::select_sis_capacity) +
                  r.n(Metric::select_sis_smt) + r.n(Metric::select_sis_scan) + r.n(Metric::select_sis_fallback) +
                  r.n(Metric::select_slow_path) ==
              r.n(Metric::wakeups) - r.n(Metric::wakeups_no_placement));
    }
}

TEST_CASE("The same scenario and seed give identical metrics", "[wake_path][determinism]") {
    const json d = doc(R"({"machine": "xeon-2s-16c32t",
      "workload": {"kind": "messaging", "groups": 1, "fds": 4, "loops": 10, "hogs": {"count": 3}},
      "policies": ["plain"], "run": {"seeds": [7]}})");
    const Outcome a = simulate(d);
    const Outcome b = simulate(d);
    CHECK(a.m == b.m);
}

TEST_CASE("run_scenario gives the same results with one job and with two", "[wake_path][determinism]") {
    const Scenario sc = parse_scenario(doc(R"({"machine": "kvm-2vcpu",
      "workload": {"kind": "pipe", "loops": 300},
      "policies": ["plain", "wf_sync", "reciprocal_sync"], "run": {"seeds": [1, 2]},
      "cases": [{"name": "unpinned"}, {"name": "hog", "set": {"workload": {"hogs": {"count": 1}}, "run": {"duration": "20ms"}}}]})"),
                                       "test.json");
    RunOptions one;
    one.jobs = 1;
    RunOptions two;
    two.jobs = 2;
    const auto r1 = run_scenario(sc, one);
    const auto r2 = run_scenario(sc, two);
    REQUIRE(r1.size() == 12);
    REQUIRE(r2.size() == r1.size());
    for (size_t i = 0; i < r1.size(); ++i) {
        INFO(r1[i].case_name << " " << r1[i].policy << " seed " << r1[i].seed);
        CHECK(r1[i].case_name == r2[i].case_name);
        CHECK(r1[i].policy == r2[i].policy);
        CHECK(r1[i].seed == r2[i].seed);
        CHECK(r1[i].result.metrics == r2[i].result.metrics);
    }
    // Different seeds are different samples (fork spacing and cost jitter are seeded).
    CHECK(r1[0].result.metrics != r1[1].result.metrics);
}

// ---------------------------------------------------------------------------------------------
// The policy interface (kernel/wake_policy.h, policies/registry.h).

TEST_CASE("Every registered policy declares its parameters with defaults that read back typed", "[policies][params]") {
    for (const PolicyKind* k : policy_registry()) {
        INFO(k->name);
        CHECK(!k->description.empty());
        CHECK(!k->origin.empty());
        const Policy p = make_policy(k->name);
        REQUIRE(p.parts.size() == 1);
        CHECK(p.param_texts().size() == k->params.size());
        PolicyRun run = p.instantiate();
        REQUIRE(run.rules.size() == 1);
        CHECK(run.rules.front()->name() == k->name);
    }
    const Policy s = make_policy("seesaw");
    CHECK(s.parts.front().params.choice("variant") == "two_bits");
    CHECK(s.parts.front().params.duration_ns("window") == 40'000'000);
}

TEST_CASE("Composing keeps each part's own state and parameters, in composition order", "[policies][params]") {
    const json d = doc(R"({"name": "t", "machine": )" + flat(2) + R"(, "workload": {"kind": "pipe", "loops": 10},
        "policies": [{"name": "two", "compose": [{"use": "seesaw", "params": {"variant": "one_bit"}},
                                                  {"use": "prev_cpu", "params": {"mode": "if_idle"}}, "wf_sync"]}]})");
    const Scenario sc = parse_scenario(d, "test.json");
    const Policy& p = sc.policies.front();
    REQUIRE(p.parts.size() == 3);
    CHECK(p.param_texts() == std::vector<std::pair<std::string, std::string>>{
                                 {"seesaw.variant", "one_bit"}, {"seesaw.window", "40ms"}, {"seesaw.jiffies", "10"}, {"prev_cpu.mode", "if_idle"}});
    PolicyRun run = p.instantiate();
    REQUIRE(run.rules.size() == 3);
    CHECK(run.rules[0]->name() == "seesaw");
    CHECK(run.rules[1]->name() == "prev_cpu");
    // Flags fold through the parts: the pipe site already passes WF_SYNC, a reply site gains it.
    const WakeSite reply{"reply", 0, true, SiteRole::reply};
    CHECK(run.site_flags(reply) == WF_SYNC);
}
