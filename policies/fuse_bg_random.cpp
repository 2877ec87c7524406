// fuse_bg_random: the "random qid" variant for background requests that Bernd Schubert measured in
// the reduced-queues series ("fuse: {io-uring} Allow to reduce the number of queues and request
// distribution", v2 2025-10-03; 429 vs 903 MiB/s for the neighbour walk at iodepth 8, so v3 dropped
// it). fuse_uring_task_to_queue picks a uniformly random queue from the run's seeded stream;
// foreground requests keep task_cpu(current). io-uring only. Spreads load, but usually wakes a ring
// thread on an idle, clocked-down core and loses locality: expected to lose to "cpu++".
#include "policies/registry.h"

namespace wakesim {

namespace {
class FuseBgRandom final : public WakePolicy {
public:
    std::string name() const override { return "fuse_bg_random"; }
    int fuse_bg_queue(const FuseQueueCtx& c) override {
        return static_cast<int>(c.rng.below(c.queue_cpu.size()));
    }
};
}  // namespace

const PolicyKind& fuse_bg_random_policy() {
    static const PolicyKind k{
        "fuse_bg_random", "io-uring background FUSE requests on a random queue (seeded); foreground unchanged",
        "'fuse: {io-uring} Allow to reduce the number of queues and request distribution' v2 (Schubert, "
        "2025-10-03): random qid, measured worse",
        {}, false,
        [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<FuseBgRandom>(); }};
    return k;
}

}  // namespace wakesim
