// Sends the scheduler's events to several observers, in the order they were added (the counting
// observer, then the trace writer and the explain recorder when a run has them). A run with only
// the counting observer gives it to the scheduler directly.
#pragma once
#include <vector>

#include "kernel/observer.h"

namespace wakesim {

class ObserverTee final : public SchedObserver {
public:
    void add(SchedObserver* o) {
        if (o) obs_.push_back(o);
    }
    size_t size() const { return obs_.size(); }
    SchedObserver* only() const { return obs_.size() == 1 ? obs_.front() : nullptr; }

    uint32_t interests() const override {
        uint32_t m = 0;
        for (auto* o : obs_) m |= o->interests();
        return m;
    }

    void ttwu_waking(const Task& p, const Task* waker, int this_cpu) override {
        for (auto* o : obs_) o->ttwu_waking(p, waker, this_cpu);
    }
    void ttwu_woken(const Task& p, int cpu, int this_cpu, WokenVia via, const SelectResultEv* placement) override {
        for (auto* o : obs_) o->ttwu_woken(p, cpu, this_cpu, via, placement);
    }
    void ttwu_wakeup(const Task& p, int cpu, const Task* curr) override {
        for (auto* o : obs_) o->ttwu_wakeup(p, cpu, curr);
    }
    void wakeup_new(const Task& p, int parent_cpu, const Task* parent_curr) override {
        for (auto* o : obs_) o->wakeup_new(p, parent_cpu, parent_curr);
    }
    void select_begin(const Task& p, Time now) override {
        for (auto* o : obs_) o->select_begin(p, now);
    }
    void select_fair(const SelectFairEv& e) override {
        for (auto* o : obs_) o->select_fair(e);
    }
    void pinned(const PinnedEv& e) override {
        for (auto* o : obs_) o->pinned(e);
    }
    void policy_rule(const PolicyRuleEv& e) override {
        for (auto* o : obs_) o->policy_rule(e);
    }
    void feec(const FeecEv& e) override {
        for (auto* o : obs_) o->feec(e);
    }
    void want_affine(const WantAffineEv& e) override {
        for (auto* o : obs_) o->want_affine(e);
    }
    void domain(const DomainEv& e) override {
        for (auto* o : obs_) o->domain(e);
    }
    void wake_affine(const WakeAffineEv& e) override {
        for (auto* o : obs_) o->wake_affine(e);
    }
    void sis_begin(const SisBeginEv& e) override {
        for (auto* o : obs_) o->sis_begin(e);
    }
    void sis_target_busy(const SisTargetBusyEv& e) override {
        for (auto* o : obs_) o->sis_target_busy(e);
    }
    void sis_prev(const SisPrevEv& e) override {
        for (auto* o : obs_) o->sis_prev(e);
    }
    void select_idle_cpu(const SelectIdleCpuEv& e) override {
        for (auto* o : obs_) o->select_idle_cpu(e);
    }
    void select_outcome(const SelectOutcomeEv& e) override {
        for (auto* o : obs_) o->select_outcome(e);
    }
    void select_task_rq(const SelectResultEv& e) override {
        for (auto* o : obs_) o->select_task_rq(e);
    }
    void migrate(const Task& p, int from, int to, MigrationCause cause) override {
        for (auto* o : obs_) o->migrate(p, from, to, cause);
    }
    void sched_switch(int cpu, const Task* prev, char prev_state, const Task* next) override {
        for (auto* o : obs_) o->sched_switch(cpu, prev, prev_state, next);
    }
    void switched_in(int cpu, const Task& t) override {
        for (auto* o : obs_) o->switched_in(cpu, t);
    }
    void balance(int cpu, int level, bool newidle, bool moved) override {
        for (auto* o : obs_) o->balance(cpu, level, newidle, moved);
    }
    void resched_ipi(int cpu) override {
        for (auto* o : obs_) o->resched_ipi(cpu);
    }

private:
    std::vector<SchedObserver*> obs_;
};

}  // namespace wakesim
