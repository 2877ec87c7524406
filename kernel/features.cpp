#include "kernel/features.h"

namespace wakesim {

const std::array<FeatInfo, static_cast<size_t>(Feat::kCount)>& feature_table() {
    static const std::array<FeatInfo, static_cast<size_t>(Feat::kCount)> t{{
        {"SIS_UTIL", true, "the scan depth of `select_idle_cpu` shrinks with LLC utilisation"},
        {"WA_IDLE", true, "`wake_affine` prefers an idle CPU, and the waker's CPU on sync wakes"},
        {"WA_WEIGHT", true, "`wake_affine` compares the loads of the waker's CPU and prev"},
        {"WA_BIAS", true, "`wake_affine_weight` biases toward prev by half the imbalance_pct"},
        {"TTWU_QUEUE", true, "remote wakeups go through the target's wake list and an IPI"},
        {"DELAY_DEQUEUE", true, "an ineligible sleeper stays queued, and its wakeup bypasses placement"},
        {"DELAY_ZERO", true,
         "a delayed sleeper's positive lag is clipped to 0 when it leaves the queue, and a woken one that is owed "
         "service is re-placed at V with a fresh deadline (`requeue_delayed_entity`)"},
        {"WAKEUP_PREEMPTION", true, "a wakee may preempt the running task"},
        {"RUN_TO_PARITY", true, "the running task is protected until vprot"},
        {"PREEMPT_SHORT", true, "a wakee with a shorter slice preempts at once"},
        {"PLACE_LAG", true, "a sleeper keeps its lag"},
        {"PLACE_DEADLINE_INITIAL", true, "a forked task starts with half a slice"},
        {"PLACE_REL_DEADLINE", true,
         "a task dequeued without sleeping (moved by the load balancer) keeps the rest of its slice: "
         "`dequeue_entity()` stores its deadline relative to its vruntime and `place_entity()` adds it back"},
        {"NEXT_BUDDY", false, "prefer the last wakee at the next pick"},
        {"PICK_BUDDY", true, "pick the next buddy when it is eligible"},
        {"CACHE_HOT_BUDDY", true, "the next buddy counts as cache hot for balancing"},
        {"UTIL_EST", true, "utilisation estimate sampled at dequeue"},
        {"NI_RANDOM", true, "newidle balance is tried with the probability of its recent success (seeded)"},
    }};
    return t;
}

SchedFeatures::SchedFeatures() {
    const auto& t = feature_table();
    for (size_t i = 0; i < t.size(); ++i) bits_[i] = t[i].default_on;
}

bool SchedFeatures::set_by_name(std::string_view name, bool v) {
    const auto& t = feature_table();
    for (size_t i = 0; i < t.size(); ++i)
        if (name == t[i].name) {
            bits_[i] = v;
            return true;
        }
    return false;
}

std::vector<std::string> SchedFeatures::names() {
    std::vector<std::string> n;
    for (const auto& f : feature_table()) n.emplace_back(f.name);
    return n;
}

std::string SchedFeatures::effective() const {
    std::string s;
    const auto& t = feature_table();
    for (size_t i = 0; i < t.size(); ++i) {
        if (!s.empty()) s += ' ';
        if (!bits_[i]) s += "NO_";
        s += t[i].name;
    }
    return s;
}

// The table docs/scenarios.md embeds (`wakesim list features --markdown`).
std::string features_markdown() {
    std::string out = "| feature | default | effect in wakesim |\n|---|---|---|\n";
    for (const auto& f : feature_table())
        out += std::string("| `") + f.name + "` | " + (f.default_on ? "on" : "off") + " | " + f.why + " |\n";
    return out;
}

}  // namespace wakesim
