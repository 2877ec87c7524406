// The explain recorder: the scheduler's decision events (kernel/observer.h) of one select_task_rq
// call, kept as they came, and rendered as the text `wakesim explain` prints. Tests assert on
// the events; only the CLI reads the text.
#pragma once
#include <string>
#include <variant>
#include <vector>

#include "kernel/observer.h"

namespace wakesim {

using WakeEvent = std::variant<SelectFairEv, PinnedEv, PolicyRuleEv, FeecEv, WantAffineEv, DomainEv, WakeAffineEv, SisBeginEv,
                               SisTargetBusyEv, SisPrevEv, SelectIdleCpuEv, SelectOutcomeEv, SelectResultEv>;

// One line of text per event that says something (an outcome already told by the step before it
// says nothing more); "" for the others.
std::string describe(const WakeEvent& e);
std::vector<std::string> render(const std::vector<WakeEvent>& events);

class WakeExplain final : public SchedObserver {
public:
    // The events of the explained call, select_begin to select_task_rq's return.
    const std::vector<WakeEvent>& events() const { return events_; }
    bool captured() const { return done_; }
    std::vector<std::string> lines() const { return render(events_); }

    // Nothing on other calls: the scheduler sends everything for the explained call.
    uint32_t interests() const override { return 0; }
    void select_begin(const Task&) override {
        events_.clear();
        recording_ = true;
        done_ = false;
    }
    void select_fair(const SelectFairEv& e) override { add(e); }
    void pinned(const PinnedEv& e) override { add(e); }
    void policy_rule(const PolicyRuleEv& e) override { add(e); }
    void feec(const FeecEv& e) override { add(e); }
    void want_affine(const WantAffineEv& e) override { add(e); }
    void domain(const DomainEv& e) override { add(e); }
    void wake_affine(const WakeAffineEv& e) override { add(e); }
    void sis_begin(const SisBeginEv& e) override { add(e); }
    void sis_target_busy(const SisTargetBusyEv& e) override { add(e); }
    void sis_prev(const SisPrevEv& e) override { add(e); }
    void select_idle_cpu(const SelectIdleCpuEv& e) override { add(e); }
    void select_outcome(const SelectOutcomeEv& e) override { add(e); }
    void select_task_rq(const SelectResultEv& e) override {
        if (!recording_) return;
        add(e);
        recording_ = false;
        done_ = true;
    }

private:
    template <class T>
    void add(const T& e) {
        if (recording_) events_.emplace_back(e);
    }
    std::vector<WakeEvent> events_;
    bool recording_ = false;
    bool done_ = false;
};

}  // namespace wakesim
