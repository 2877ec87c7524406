// Counters and distributions a run reports (docs/metrics.md defines each one). Hot-path updates
// are increments into fixed arrays; nothing allocates per event.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "engine/engine.h"
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

enum class MigrationCause : uint8_t { wakeup, balance, newidle, active, kCount };

// Where select_task_rq_fair ended, for `explain` summaries and tests.
enum class SelectOutcome : uint8_t {
    pinned,           // select_task_rq skipped the fair class (one CPU allowed / migrate_disable)
    policy_early,     // a policy rule before WF_CURRENT_CPU
    current_cpu,      // WF_CURRENT_CPU short-circuit
    policy_affine,    // a policy rule in the affine branch
    sis_target,       // select_idle_sibling step 1
    sis_prev,         // step 2
    sis_kthread,      // step 3
    sis_recent,       // step 4
    sis_capacity,     // step 5 (asym)
    sis_smt,          // step 7
    sis_scan,         // step 8
    sis_fallback,     // step 9 (prev_aff, recent, or target)
    slow_path,        // sched_balance_find_dst_cpu
    kCount
};
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
