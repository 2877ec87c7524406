// Queue walks shared by the FUSE background queue policies: the registered queues of a NUMA node
// in CPU order (numa_registered_q_mask) and two random choices (fuse_uring_best_queue), from the
// "fuse: {io-uring} Allow to reduce the number of queues and request distribution" series.
// Nothing here allocates: each call walks the queue list.
#pragma once
#include "kernel/sched.h"
#include "kernel/wake_policy.h"

namespace wakesim::fusebg {

inline int node_of_queue(const FuseQueueCtx& c, int q) {
    return c.sched.topo().cpu(c.queue_cpu[static_cast<size_t>(q)]).node;
}

// Queues on `node` (all queues for node -1).
inline int weight(const FuseQueueCtx& c, int node) {
    int w = 0;
    for (size_t q = 0; q < c.queue_cpu.size(); ++q) w += node < 0 || node_of_queue(c, static_cast<int>(q)) == node;
    return w;
}

// cpumask_nth: the n-th queue (0-based, in CPU order) on `node` (all for -1); -1 if none.
inline int nth_queue(const FuseQueueCtx& c, int node, int n) {
    for (size_t q = 0; q < c.queue_cpu.size(); ++q)
        if (node < 0 || node_of_queue(c, static_cast<int>(q)) == node)
            if (n-- == 0) return static_cast<int>(q);
    return -1;
}

// fuse_uring_best_queue: two random queues of the mask, the one with fewer requests.
inline int best_of_two(const FuseQueueCtx& c, int node) {
    const int w = weight(c, node);
    if (w == 0) return -1;
    const int a = nth_queue(c, node, static_cast<int>(c.rng.below(static_cast<uint64_t>(w))));
    if (w == 1) return a;
    const int b = nth_queue(c, node, static_cast<int>(c.rng.below(static_cast<uint64_t>(w))));
    return c.nr_reqs[static_cast<size_t>(b)] < c.nr_reqs[static_cast<size_t>(a)] ? b : a;
}

}  // namespace wakesim::fusebg
