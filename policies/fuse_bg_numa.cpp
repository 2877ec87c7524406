// fuse_bg_numa: the NUMA-local form of "cpu++" in "fuse: {io-uring} Queue background requests on a
// different core" (Schubert, v3 2025-10-13): fuse_uring_get_queue takes, for a background request,
// the registered queue of the submitter's node whose rank in the node's queue mask is
// (task_cpu + 1) mod weight, never looking at load (the series' rule with no thresholds). io-uring
// only. Like fuse_bg_next_cpu it moves the ring thread's work off the submitter's core, and it
// keeps it on the submitter's node (no cross-node copy) where plain cpu + 1 on the last CPU of a
// node crosses; with one queue on the node it is the submitter's own queue again.
#include "policies/fuse_bg_queue_util.h"
#include "policies/registry.h"

namespace wakesim {

namespace {
class FuseBgNuma final : public WakePolicy {
public:
    std::string name() const override { return "fuse_bg_numa"; }
    int fuse_bg_queue(const FuseQueueCtx& c) override {
        const int node = c.sched.topo().cpu(c.cpu).node;
        const int w = fusebg::weight(c, node);
        if (w == 0) return -1;  // no queue on the node: mainline's mapping
        return fusebg::nth_queue(c, node, w > 1 ? (c.cpu + 1) % w : 0);
    }
};
}  // namespace

const PolicyKind& fuse_bg_numa_policy() {
    static const PolicyKind k{
        "fuse_bg_numa",
        "io-uring background FUSE requests on the next queue of the submitter's NUMA node ((cpu + 1) mod its "
        "queues); foreground unchanged",
        "'fuse: {io-uring} Queue background requests on a different core' (Schubert, v3 2025-10-13): "
        "fuse_uring_get_queue's node mask",
        {}, false,
        [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<FuseBgNuma>(); }};
    return k;
}

}  // namespace wakesim
