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
class Hardware;

using WakeEvent = std::variant<SelectFairEv, PinnedEv, PolicyRuleEv, FeecEv, WantAffineEv, DomainEv, WakeAffineEv, SisBeginEv,
                               SisTargetBusyEv, SisPrevEv, SelectIdleCpuEv, SelectOutcomeEv, SelectResultEv>;

// One line of text per event that says something (an outcome already told by the step before it
// says nothing more); "" for the others.
std::string describe(const WakeEvent& e);
std::vector<std::string> render(const std::vector<WakeEvent>& events);

// What became of the explained wakeup after its placement: how it was queued, what the target
// CPU was doing, and when the wakee ran there.
struct WakeFollowUp {
    bool queued = false;  // ttwu_woken() seen
    WokenVia via = WokenVia::queue;
    int cpu = -1;
    std::string idle_state;  // the target's idle state then ("": not idle, or no hardware attached)
    int64_t idle_exit_ns = 0;
    bool idle_mwait = false, idle_polling = false;
    bool enqueued = false;  // ttwu_wakeup() seen: on the runqueue
    Time enqueued_at = 0;
    std::string curr;  // the target's task then ("" : idle)
    bool switched = false;  // __schedule() picked the wakee
    std::string prev;       // the task it switched from ("": idle)
    char prev_state = 'S';  // 'R': prev was preempted
    bool ran = false;       // finish_task_switch(): the wakee runs
    int ran_cpu = -1;       // where (the target, unless a balancer pulled it first)
    Time ran_at = 0;
};

class WakeExplain final : public SchedObserver {
public:
    // stop_when_done: stop the run once the wakee has run (the CLI); tests keep the whole run.
    explicit WakeExplain(bool stop_when_done = false) : stop_when_done_(stop_when_done) {}
    void attach(Engine& engine, const Hardware* hw = nullptr) {
        engine_ = &engine;
        hw_ = hw;
    }

    // The events of the explained call, select_begin to select_task_rq's return.
    const std::vector<WakeEvent>& events() const { return events_; }
    bool captured() const { return done_; }
    bool stopped_run() const { return stop_when_done_ && follow_.ran; }  // the wakee ran and the run stopped there
    Time at() const { return at_; }  // when the explained call was made
    const WakeFollowUp& follow_up() const { return follow_; }
    // The decision path, then what followed it.
    std::vector<std::string> lines() const;

    // The explained call's decision events come from the scheduler only for that call; what
    // follows it is picked out of every wakeup and switch.
    uint32_t interests() const override { return kObsTtwuWoken | kObsTtwuWakeup | kObsSwitch | kObsSwitchedIn; }
    void select_begin(const Task& p, Time now) override {
        at_ = now;
        events_.clear();
        recording_ = true;
        done_ = false;
        wakee_ = p.id;
        follow_ = WakeFollowUp{};
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
    void ttwu_woken(const Task& p, int cpu, int, WokenVia via, const SelectResultEv*) override;
    void ttwu_wakeup(const Task& p, int cpu, const Task* curr) override;
    void sched_switch(int cpu, const Task* prev, char prev_state, const Task* next) override;
    void switched_in(int cpu, const Task& t) override;

private:
    template <class T>
    void add(const T& e) {
        if (recording_) events_.emplace_back(e);
    }
    // Still following the explained wakeup: placed, not yet run.
    bool following(const Task& p) const { return done_ && !follow_.ran && p.id == wakee_; }
    std::vector<WakeEvent> events_;
    WakeFollowUp follow_;
    Engine* engine_ = nullptr;
    const Hardware* hw_ = nullptr;
    bool stop_when_done_;
    int wakee_ = -1;
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
    uint32_t interests() const override { return kObsSelectResult | kObsTtwuWoken; }
    void select_task_rq(const SelectResultEv& e) override;
    // Wakeups that need no placement (ttwu_runnable(): the wakee still on its runqueue) are
    // not select_task_rq calls; they are counted as skipped.
    void ttwu_woken(const Task& p, int cpu, int this_cpu, WokenVia via, const SelectResultEv* placement) override;

    uint64_t found() const { return found_; }      // the call's number (1-based), 0: none
    uint64_t matches() const { return matches_; }  // calls that matched (all of them when none was found)
    uint64_t skipped() const { return skipped_; }  // wakeups that matched but needed no placement
    // The names of the tasks woken at or after TIME, in the order of their first wakeup.
    const std::vector<std::string>& woken() const { return woken_; }

private:
    std::string wakee_;
    Time after_;
    uint64_t nth_;
    Engine* engine_ = nullptr;
    const Scheduler* sched_ = nullptr;
    uint64_t found_ = 0, matches_ = 0, skipped_ = 0;
    std::vector<char> seen_;  // by task id
    std::vector<std::string> woken_;
};

}  // namespace wakesim
