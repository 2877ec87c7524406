// The out-of-tree sched_vcpu_pack patch of the development VM's guest kernel (machine parameter
// vcpu_pack): before mainline's wake path runs, a wakee goes to a busy vCPU that has room (one
// runnable task, no wakeup pending, utilisation with the wakee's under 70%), so that no idle vCPU
// has to be woken. Read from the running kernel and seen in its traces (docs/validation.md,
// "sched_vcpu_pack").
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "sim_test_util.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

// A on CPU0 and B on CPU1 (B forks while A computes) ping-pong with `flags` on their wakes; A
// works `a_work` per round trip, B 5 us, and A sleeps `a_sleep` after each (none if empty). The
// 2-vCPU guest's costs with sched_vcpu_pack = `bits`. Both tasks start at half a vCPU's capacity
// (post_init_entity_util_avg()): packing waits until that has decayed, so the light pair sleeps
// between round trips and is measured after `warmup` of them.
json pair(int bits, const std::string& flags, const std::string& a_work, int loops, int warmup,
          const std::string& a_sleep = "") {
    const std::string sleep = a_sleep.empty() ? "" : R"(, {"sleep": ")" + a_sleep + R"("})";
    const std::string site = R"("flags": )" + flags + R"(, "sync_capable": true)";
    return doc(R"({"machine": {"preset": "kvm-2vcpu", "profile": {"vcpu_pack": )" + std::to_string(bits) + R"(}},
      "workload": {"kind": "program",
        "channels": {"ab": {"wake": {)" + site + R"(, "role": "request"}},
                     "ba": {"wake": {)" + site + R"(, "role": "reply"}}},
        "tasks": [
          {"name": "A", "role": "requester", "program": [{"loop": )" + std::to_string(loops) +
               R"(, "do": [{"run": ")" + a_work + R"("}, {"post": "ab"}, {"wait": "ba"}, {"op": 0})" + sleep + R"(]}]},
          {"name": "B", "role": "server", "program": [{"loop": )" + std::to_string(loops) +
               R"(, "do": [{"wait": "ab"}, {"run": "5us"}, {"post": "ba"}]}]}]},
      "policies": ["plain"], "run": {"warmup_ops": )" + std::to_string(warmup) + "}}");
}

const std::string kPlain = "[]";
const std::string kSync = R"(["WF_SYNC"])";

// Placement as mainline's on this idle pair: nothing packed, every wakeup to the other vCPU.
void check_unpacked(const Outcome& r) {
    REQUIRE(r.completed);
    CHECK(r.n(Metric::select_vcpu_pack) == 0);
    CHECK(r.n(Metric::wakeups_remote) == r.n(Metric::wakeups));
}

}  // namespace

TEST_CASE("sched_vcpu_pack: a light wakee whose prev vCPU is idle is packed onto the waker's busy vCPU",
          "[vcpu_pack][wake_path]") {
    // Mainline (T1): every plain wakeup goes back to the idle prev, remote, and nothing migrates.
    const Outcome mainline = simulate(pair(0, kPlain, "5us", 300, 20));
    check_unpacked(mainline);
    CHECK(mainline.n(Metric::migrations) == 0);
    // Bit 4: B's prev is idle, A's vCPU runs A alone well under 70%: B joins A there, and the pair
    // stays stacked (the wakee is then queued on its busy prev, which still has room).
    const Outcome packed = simulate(pair(4, kPlain, "5us", 1000, 500, "200us"));
    REQUIRE(packed.completed);
    CHECK(packed.n(Metric::select_vcpu_pack) > 0);
    CHECK(packed.n(Metric::wakeups_local) > 9 * packed.n(Metric::wakeups) / 10);
    CHECK(packed.n(Metric::cpus_busy) == 1);
}

TEST_CASE("sched_vcpu_pack: a vCPU busy above 70% of its capacity has no room, so the wakee goes to its idle prev",
          "[vcpu_pack][wake_path]") {
    // A computes 400 us per round trip: once its vCPU's utilisation passes 70% (about 40 ms) no
    // wakee is packed there, and B, alone on the other vCPU, is woken there as mainline would.
    const Outcome heavy = simulate(pair(4, kPlain, "400us", 800, 300));
    check_unpacked(heavy);
    CHECK(heavy.util(0) > 0.7);
}

TEST_CASE("sched_vcpu_pack: bit 2 packs a WF_SYNC wakee onto the waker's vCPU, where mainline returns the idle prev",
          "[vcpu_pack][wake_path]") {
    // Mainline (T2): wake_affine_idle picks the waker's CPU, but it is busy, so select_idle_sibling
    // returns the idle prev.
    const Outcome mainline = simulate(pair(0, kSync, "5us", 300, 20));
    REQUIRE(mainline.completed);
    CHECK(mainline.n(Metric::migrations) == 0);
    const Outcome sync_bit = simulate(pair(2, kSync, "5us", 1000, 500, "200us"));
    REQUIRE(sync_bit.completed);
    CHECK(sync_bit.n(Metric::select_vcpu_pack) > 0);
    CHECK(sync_bit.n(Metric::wakeups_local) > 9 * sync_bit.n(Metric::wakeups) / 10);
    // Bit 2 alone leaves plain wakeups to mainline.
    const Outcome plain_wakes = simulate(pair(2, kPlain, "5us", 1000, 500, "200us"));
    REQUIRE(plain_wakes.completed);
    CHECK(plain_wakes.n(Metric::select_vcpu_pack) == 0);
    CHECK(plain_wakes.n(Metric::migrations) == 0);
}

TEST_CASE("sched_vcpu_pack: a vCPU shared with a CPU hog has no room", "[vcpu_pack][wake_path]") {
    // A hog pinned to CPU 0 shares it with A: two runnable tasks whenever A wakes B, and the vCPU
    // busy all the time, so B is never packed there; it goes back to its idle prev. (Either
    // condition alone refuses it; the 70% one is tested above.)
    const json d = doc(R"({"machine": {"preset": "kvm-2vcpu", "profile": {"vcpu_pack": 15}},
      "workload": {"kind": "program",
        "channels": {"ab": {"wake": {"flags": [], "role": "request"}}, "ba": {"wake": {"flags": [], "role": "reply"}}},
        "tasks": [
          {"name": "A", "cpus": "0", "role": "requester", "program": [{"loop": 0, "do": [{"run": "5us"}, {"post": "ab"}, {"wait": "ba"}, {"op": 0}]}]},
          {"name": "B", "role": "server", "program": [{"loop": 0, "do": [{"wait": "ab"}, {"run": "5us"}, {"post": "ba"}]}]},
          )" + hog("h", 0) + R"(]},
      "policies": ["plain"], "run": {"duration": "100ms"}})");
    const Outcome r = simulate(d);
    REQUIRE(r.n(Metric::ops) > 100);
    // B's first wakeup moves it off CPU 0, where it was forked; after that it stays on CPU 1.
    CHECK(r.n(Metric::migrations_wakeup) <= 1);
    CHECK(r.n(Metric::wakeups_remote) > 99 * r.n(Metric::wakeups) / 100);
    CHECK(r.n(Metric::select_vcpu_pack) == 0);
}

TEST_CASE("sched_vcpu_pack: bit 8 keeps a forked child on its parent's vCPU while that has room", "[vcpu_pack][workloads]") {
    // perf bench sched messaging: the main thread forks the 40 workers on vCPU 0 while it computes
    // there. Mainline's fork balancer sends nearly all of them to the idle vCPU 1; with bit 8 a
    // child stays with its parent whenever the parent is the only runnable task there (each child
    // reports ready and sleeps before the next fork), as long as vCPU 0 is under 70%.
    const auto on_parent = [](int bits) {
        const json d = doc(R"({"machine": {"preset": "kvm-2vcpu", "profile": {"vcpu_pack": )" + std::to_string(bits) + R"(}},
          "workload": {"kind": "messaging", "groups": 1, "fds": 20, "loops": 3},
          "policies": ["plain"], "run": {"seeds": [1]}})");
        const std::string text = traced_run(d);
        int forked = 0, on_cpu0 = 0;
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
            if (line.find("sched_wakeup_new:") == std::string::npos || line.find("comm=messaging-main") != std::string::npos)
                continue;
            ++forked;
            if (line.find("target_cpu=000") != std::string::npos) ++on_cpu0;
        }
        CHECK(forked == 40);
        return on_cpu0;
    };
    const int mainline = on_parent(0);
    const int packed = on_parent(8);
    CHECK(mainline <= 4);
    CHECK(packed >= mainline + 5);
}

TEST_CASE("kvm-2vcpu-spr carries the guest kernel's sched_vcpu_pack=15", "[vcpu_pack][machines]") {
    // /dev/fuse on that VM (docs/validation.md): each request wakes the teardown watchdog, which
    // is packed onto fio's busy vCPU, and a worker, which the room check keeps off it (fio and the
    // watchdog are two runnable tasks there), so the worker wakes on the other vCPU. The reply
    // finds no room beside the worker either (fio's utilisation and the workers' vCPU sum past
    // 70%), so fio goes back to its idle prev: nothing moves (the kernel's fio moved 0.04-0.13
    // times per read on 2026-12-02, 0.06-0.35 on 2026-12-01).
    const json d = doc(R"({"machine": "kvm-2vcpu-spr",
      "workload": {"kind": "fio", "transport": "dev", "number_ios": 3000, "teardown_watchdog": true},
      "policies": ["plain"], "run": {"warmup_ops": 1000}})");
    const Outcome r = simulate(d);
    REQUIRE(r.completed);
    const double ops = static_cast<double>(r.n(Metric::ops));
    CHECK(static_cast<double>(r.n(Metric::select_vcpu_pack)) / ops == Approx(1.0).epsilon(0.02));  // the watchdog
    const double fio = static_cast<double>(r.n(Metric::migrations_requester)) / ops;
    const double servers = static_cast<double>(r.n(Metric::migrations_server)) / ops;
    INFO("migrations per read: fio " << fio << ", watchdog and workers " << servers);
    CHECK(fio < 0.2);
    CHECK(servers < 0.2);
    // Without the patch nothing is packed.
    json off = d;
    off["machine"] = json::parse(R"({"preset": "kvm-2vcpu-spr", "profile": {"vcpu_pack": 0}})");
    CHECK(simulate(off).n(Metric::select_vcpu_pack) == 0);
}
