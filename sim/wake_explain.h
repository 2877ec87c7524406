// The explain recorder: the scheduler's decision events (kernel/observer.h) of one select_task_rq
// call, kept as they came, and rendered as the text `wakesim explain` prints. Tests assert on
// the events; only the CLI reads the text.
#pragma once
#include <string>
#include <variant>
#include <vector>

#include "engine/engine.h"
#include "kernel/observer.h"

namespace wakesim {

class Scheduler;

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
    Time at() const { return at_; }  // when the explained call was made
    std::vector<std::string> lines() const { return render(events_); }

    // Nothing on other calls: the scheduler sends everything for the explained call.
    uint32_t interests() const override { return 0; }
    void select_begin(const Task&, Time now) override {
        at_ = now;
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
    Time at_ = 0;
    bool recording_ = false;
    bool done_ = false;
};

// Finds the select_task_rq call that `wakesim explain --wakee NAME --after TIME --wakeup N`
// means: the N-th call at or after TIME whose wakee is named NAME (any wakee when NAME is
// empty). Runs are deterministic, so a run with it attached gives the call's number and a second
// run explains that call. It stops the run at the call.
class WakeFinder final : public SchedObserver {
public:
    WakeFinder(std::string wakee, Time after, uint64_t nth) : wakee_(std::move(wakee)), after_(after), nth_(nth) {}
    void attach(Engine& engine, const Scheduler& sched) {
        engine_ = &engine;
        sched_ = &sched;
    }
    uint32_t interests() const override { return kObsSelectResult; }
    void select_task_rq(const SelectResultEv& e) override;

    uint64_t found() const { return found_; }      // the call's number (1-based), 0: none
    uint64_t matches() const { return matches_; }  // calls that matched (all of them when none was found)
    // The names of the tasks woken at or after TIME, in the order of their first wakeup.
    const std::vector<std::string>& woken() const { return woken_; }

private:
    std::string wakee_;
    Time after_;
    uint64_t nth_;
    Engine* engine_ = nullptr;
    const Scheduler* sched_ = nullptr;
    uint64_t found_ = 0, matches_ = 0;
    std::vector<char> seen_;  // by task id
    std::vector<std::string> woken_;
};

}  // namespace wakesim
