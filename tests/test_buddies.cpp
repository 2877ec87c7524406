// The next buddy (cfs_rq->next) as v6.19 uses it: NEXT_BUDDY sets it at a wakeup that does not
// preempt, PICK_BUDDY lets it run first when eligible, preempt_sync() decides a WF_SYNC wakeup,
// CACHE_HOT_BUDDY keeps it from being balanced away. NEXT_BUDDY is off by default, so by default
// none of this happens.
#include <catch2/catch.hpp>

#include <string>

#include "sim_test_util.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

// A request/reply pair sharing CPU 0 with two CPU hogs: each WF_SYNC wakeup lands on a CPU whose
// queue holds the hogs, and the waker blocks right after.
json pair_with_hogs(const std::string& features) {
    return doc(R"({"machine": "kvm-2vcpu", "features": )" + features + R"(,
      "workload": {"kind": "program",
        "channels": {"req": {"wake": {"flags": ["WF_SYNC"], "sync_capable": true, "role": "request"}},
                     "rep": {"wake": {"flags": ["WF_SYNC"], "sync_capable": true, "role": "reply"}}},
        "tasks": [
          {"name": "R", "cpus": "0", "role": "requester", "program": [{"loop": 0, "do": [{"run": "20us"}, {"post": "req"}, {"wait": "rep"}, {"op": 0}]}]},
          {"name": "S", "cpus": "0", "role": "server", "program": [{"loop": 0, "do": [{"wait": "req"}, {"run": "20us"}, {"post": "rep"}]}]},
          )" + hog("h1", 0) + ", " + hog("h2", 0) + R"(]},
      "policies": ["plain"], "run": {"duration": "100ms"}})");
}

}  // namespace

TEST_CASE("NEXT_BUDDY: the woken partner runs before the hogs when the waker blocks, and PICK_BUDDY off undoes it",
          "[eevdf][features]") {
    const Outcome base = simulate(pair_with_hogs("{}"));
    const Outcome buddy = simulate(pair_with_hogs(R"({"NEXT_BUDDY": true})"));
    const Outcome no_pick = simulate(pair_with_hogs(R"({"NEXT_BUDDY": true, "PICK_BUDDY": false})"));
    INFO("round trips: default " << base.n(Metric::ops) << ", NEXT_BUDDY " << buddy.n(Metric::ops) << ", NO_PICK_BUDDY "
                                 << no_pick.n(Metric::ops));
    // Without the buddy the wakee waits for its EEVDF turn behind the hogs; with it, the pair
    // hands the CPU back and forth while the hogs wait (each pick of the buddy is still fair:
    // it must be eligible).
    CHECK(buddy.n(Metric::ops) > base.n(Metric::ops) * 104 / 100);
    // preempt_sync(): update_curr() has just restarted the waker's exec_start, so it has not run
    // migration_cost and the sync wakee does not preempt it: the ops come from picks, and
    // preemptions (by the hogs' ticks and the rare earlier deadline) stay a few per cent of them.
    CHECK(buddy.n(Metric::preemptions) * 20 < buddy.n(Metric::ops));
    CHECK(base.n(Metric::preemptions) * 20 < base.n(Metric::ops));
    // A buddy nobody picks gains nothing beyond noise (the sync wakee only skips the
    // preemption check, which it would rarely win against hogs with earlier deadlines).
    CHECK(no_pick.n(Metric::ops) * 100 <= base.n(Metric::ops) * 103);
    CHECK(no_pick.n(Metric::ops) * 100 >= base.n(Metric::ops) * 97);
}

TEST_CASE("NEXT_BUDDY is off by default: the default run equals an explicit NO_NEXT_BUDDY", "[eevdf][features]") {
    CHECK(simulate(pair_with_hogs("{}")).m == simulate(pair_with_hogs(R"({"NEXT_BUDDY": false})")).m);
}
