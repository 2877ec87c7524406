// Counters and distributions a run reports (docs/metrics.md defines each one). Hot-path updates
// are increments into fixed arrays; nothing allocates per event.
#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "kernel/observer.h"
#include "topology/topology.h"

namespace wakesim {

// Log-linear histogram (16 sub-buckets per power of two) of nanosecond latencies.
class LatencyHistogram {
public:
    void add(int64_t ns) {  // inline: three or four per FUSE request
        if (ns < 0) ns = 0;
        int b = bucket_of(static_cast<uint64_t>(ns));
        if (b >= kBuckets) b = kBuckets - 1;
        ++b_[static_cast<size_t>(b)];
        ++count_;
        sum_ += ns;
        if (ns > max_) max_ = ns;
    }
    uint64_t count() const { return count_; }
    int64_t percentile(double p) const;  // upper bound of the bucket holding the p-quantile
    double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
    int64_t max() const { return max_; }
    void clear() { *this = LatencyHistogram(); }
    // The bucket a value falls in: a percentile is its bucket's upper bound, so two percentiles
    // a bucket apart differ by the histogram's resolution (1/16 of a power of two), not more.
    static int bucket_of(uint64_t v) {
        if (v < kSub) return static_cast<int>(v);
        const int msb = 63 - std::countl_zero(v);  // >= 4
        return (msb - 3) * kSub + static_cast<int>((v >> (msb - 4)) & (kSub - 1));
    }

private:
    static constexpr int kSub = 16;
    static constexpr int kBuckets = 64 * kSub;
    static int64_t bucket_upper(int b);
    std::array<uint64_t, kBuckets> b_{};
    uint64_t count_ = 0;
    int64_t sum_ = 0;
    int64_t max_ = 0;
};

// MigrationCause and SelectOutcome are the scheduler's (kernel/observer.h).
const char* to_string(SelectOutcome o);

struct Counters {
    uint64_t ops = 0;
    uint64_t bytes = 0;
    uint64_t wakeups = 0;              // try_to_wake_up calls that woke a task
    uint64_t wakeups_local = 0;        // enqueued on the waker's CPU
    uint64_t wakeups_remote = 0;       // enqueued on another CPU
    uint64_t wakeups_ipi = 0;          // went through a wake list with an IPI
    uint64_t wakeups_poll = 0;         // remote wake of a polling idle CPU (no IPI)
    uint64_t wakeups_runnable = 0;     // ttwu_runnable: still queued (delayed dequeue), no placement
    uint64_t wakeups_affine = 0;       // wake_affine chose this_cpu
    uint64_t wake_wide = 0;            // wake_wide() said wide
    uint64_t select_calls = 0;
    std::array<uint64_t, static_cast<size_t>(SelectOutcome::kCount)> outcomes{};
    std::array<uint64_t, static_cast<size_t>(MigrationCause::kCount)> migrations_by_cause{};
    std::array<uint64_t, 6> migrations_by_distance{};  // indexed by CpuDistance
    uint64_t context_switches = 0;
    uint64_t preemptions = 0;
    uint64_t ipis = 0;
    uint64_t sis_probes = 0;
    uint64_t balance_runs = 0;
    uint64_t newidle_runs = 0;

    uint64_t migrations() const {
        uint64_t n = 0;
        for (auto m : migrations_by_cause) n += m;
        return n;
    }
};

// Where the tasks of one role (TaskRole::requester or ::server: an application and its FUSE
// daemon's threads) ran in the window. Sized once per run; updates only add.
struct RoleTime {
    uint64_t migrations = 0;
    Time total = 0;              // CPU time
    std::vector<Time> by_node;   // CPU time per NUMA node
    std::vector<Time> by_class;  // CPU time per capacity class (Metrics::capacities)
    void clear() {
        migrations = 0;
        total = 0;
        std::fill(by_node.begin(), by_node.end(), 0);
        std::fill(by_class.begin(), by_class.end(), 0);
    }
};

// FUSE requests that ended in the window, timed at the kernel's places (workloads/fuse/):
// queueing from the send to a server thread taking the request (the server's wakeup included),
// server from there to fuse_request_end, reply from fuse_request_end to the requester running
// with the result (its wakeup, or the reap of an asynchronous completion).
struct RequestTiming {
    uint64_t requests = 0;       // replies the requester saw (FORGETs and RELEASEs have none)
    uint64_t queue_changes = 0;  // io-uring: a request went to another queue than its requester's previous one
    uint64_t ring_rounds = 0, ring_requests = 0;  // io-uring: ring threads' CQE rounds and the requests in them
    uint64_t sent = 0, completed = 0;  // requests queued for the server (FORGETs too), and fuse_request_end calls
    uint64_t blocked_waits = 0;        // submitters that slept on fc->blocked_waitq (max_background reached)
    uint64_t congested = 0;            // background requests sent at or above congestion_threshold
    uint64_t worker_spawns = 0, worker_exits = 0;  // libfuse's /dev/fuse worker pool growing and shrinking
    LatencyHistogram queue, server, reply, total;
    void clear() { *this = RequestTiming(); }
};

struct Metrics {
    Counters c;
    RequestTiming fuse;
    LatencyHistogram wake_latency;  // wakeup issued -> wakee runs
    std::array<RoleTime, 2> roles;  // [0] requesters, [1] servers
    std::vector<int> capacities;    // the machine's CPU capacities, largest first (RoleTime::by_class)
    Time window_start = 0;

    // Sizes the per-role tables for `topo`.
    void init(const Topology& topo);
    // Starts the measured window at `now` (per-CPU busy time comes from the scheduler's own clocks).
    void reset(Time now = 0) {
        c = Counters{};
        wake_latency.clear();
        fuse.clear();
        for (RoleTime& r : roles) r.clear();
        window_start = now;
    }
};

}  // namespace wakesim
