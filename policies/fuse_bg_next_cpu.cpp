// fuse_bg_next_cpu ("cpu++"): "fuse: {io-uring} Queue background requests on a different core"
// (Bernd Schubert; patch 6 of the reduced-queues series, v3 2025-10-13, v4 Apr 2026; not merged).
// In fuse_uring_task_to_queue a background request (async direct I/O, readahead, writeback) goes
// to queue (task_cpu(current) + 1) % nr_queues instead of the submitter's own; foreground requests
// keep task_cpu(current). io-uring transport only. Wins when one task submits several requests
// (fio iodepth > 1): the pinned ring thread serves them on the next core while the submitter goes
// on submitting, instead of preempting it on its own core (whose completion wakes then move it
// away). Loses cache locality and may wake an idle next core; nothing changes for /dev/fuse.
// With fewer queues than CPUs (nr_queues, queue_cpus) the result is a queue's index, as the
// formula is written: it may be the submitter's own queue (queues on CPUs 3 and 4, fio on 3:
// (3 + 1) % 2 = 0, CPU 3's) or one on another node. The v3 rule (fuse_bg_retries) has the same
// property within a node: the (cpu + 1) % weight-th registered queue.
#include "policies/registry.h"

namespace wakesim {

namespace {
class FuseBgNextCpu final : public WakePolicy {
public:
    std::string name() const override { return "fuse_bg_next_cpu"; }
    int fuse_bg_queue(const FuseQueueCtx& c) override {
        return (c.cpu + 1) % static_cast<int>(c.queue_cpu.size());
    }
};
}  // namespace

const PolicyKind& fuse_bg_next_cpu_policy() {
    static const PolicyKind k{
        "fuse_bg_next_cpu",
        "io-uring background FUSE requests on queue (task_cpu + 1) % nr_queues (\"cpu++\"); foreground unchanged",
        "'fuse: {io-uring} Queue background requests on a different core' (Schubert, reduced-queues series v3 "
        "2025-10-13, v4 Apr 2026)",
        {}, false,
        [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<FuseBgNextCpu>(); }};
    return k;
}

}  // namespace wakesim
