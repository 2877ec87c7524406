// The kernel's heuristic knobs (kernel/sched/features.h, v6.19 defaults) as named flags a
// scenario can toggle. Declared once here, with the reason each matters to wake placement.
#pragma once
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace wakesim {

enum class Feat : int {
    SIS_UTIL,         // limit select_idle_cpu's scan by LLC utilisation (nr_idle_scan)
    WA_IDLE,          // wake_affine_idle: idle/sync shortcuts
    WA_WEIGHT,        // wake_affine_weight: load comparison
    WA_BIAS,          // 100:108 bias toward prev in wake_affine_weight
    TTWU_QUEUE,       // remote wakeups through the target's wake list + IPI
    DELAY_DEQUEUE,    // an ineligible sleeper stays queued: its wakeup skips placement
    DELAY_ZERO,       // clip a delayed task's positive lag to 0 (final dequeue, and requeue at wakeup)
    WAKEUP_PREEMPTION,  // a woken task may preempt the running one
    RUN_TO_PARITY,    // the running task keeps the CPU until its protection (vprot) runs out
    PREEMPT_SHORT,    // a wakee with a shorter slice preempts at once
    PLACE_LAG,        // keep a sleeper's lag across sleep
    PLACE_DEADLINE_INITIAL,  // a new task starts with half a slice
    PLACE_REL_DEADLINE,  // a task dequeued without sleeping keeps its relative deadline
    NEXT_BUDDY,       // (off) prefer the wakee at the next pick
    PICK_BUDDY,       // honour the next buddy when picking
    CACHE_HOT_BUDDY,  // the next buddy is cache hot for load balancing
    UTIL_EST,         // utilisation estimate at dequeue
    NI_RANDOM,        // v6.19: newidle balance tried with probability of its recent success
    kCount
};

struct FeatInfo {
    const char* name;
    bool default_on;
    const char* why;
};

const std::array<FeatInfo, static_cast<size_t>(Feat::kCount)>& feature_table();
// The features as the Markdown table docs/scenarios.md carries.
std::string features_markdown();

class SchedFeatures {
public:
    SchedFeatures();
    bool on(Feat f) const { return bits_[static_cast<size_t>(f)]; }
    void set(Feat f, bool v) { bits_[static_cast<size_t>(f)] = v; }
    // Returns false when `name` is not a feature.
    bool set_by_name(std::string_view name, bool v);
    static std::vector<std::string> names();
    // "SIS_UTIL WA_IDLE ... NO_NEXT_BUDDY" as /sys/kernel/debug/sched/features prints it.
    std::string effective() const;

private:
    std::array<bool, static_cast<size_t>(Feat::kCount)> bits_{};
};

}  // namespace wakesim
