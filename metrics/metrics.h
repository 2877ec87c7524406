// Counters and distributions a run reports (docs/metrics.md defines each one). Hot-path updates
// are increments into fixed arrays; nothing allocates per event.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "kernel/observer.h"
#include "topology/topology.h"

namespace wakesim {

// Log-linear histogram (16 sub-buckets per power of two) of nanosecond latencies.
class LatencyHistogram {
public:
    void add(int64_t ns);
    uint64_t count() const { return count_; }
    int64_t percentile(double p) const;  // upper bound of the bucket holding the p-quantile
    double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
    int64_t max() const { return max_; }
    void clear() { *this = LatencyHistogram(); }

private:
    static constexpr int kSub = 16;
    static constexpr int kBuckets = 64 * kSub;
    static int bucket_of(uint64_t v);
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

struct Metrics {
    Counters c;
    LatencyHistogram wake_latency;  // wakeup issued -> wakee runs

    // Starts the measured window (per-CPU busy time comes from the scheduler's own clocks).
    void reset() {
        c = Counters{};
        wake_latency.clear();
    }
};

}  // namespace wakesim
