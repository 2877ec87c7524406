// The wake-policy interface: everything a policy may change, at the kernel's own places.
//  - wake flags per wake site (what the waker passes to try_to_wake_up),
//  - placement hooks inside select_task_rq_fair: `early` (after record_wakee, before the
//    WF_CURRENT_CPU check), `in_feec` (EAS on and the root domain not overutilized: inside
//    find_energy_efficient_cpu before its energy estimate) and `after_wake_affine` (in the first
//    SD_WAKE_AFFINE domain spanning prev, before select_idle_sibling),
//  - the FUSE io-uring queue of a background request (fuse_uring_task_to_queue; "cpu++" and its
//    variants, docs/fuse.md),
//  - task hooks: created (attributes such as SCHED_IDLE), about to block, back on a CPU.
// A policy keeps its own per-task state (PerTask<T>); Task carries no policy fields. One
// WakePolicy object exists per run, so that state never leaks between runs or threads.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/rng.h"
#include "kernel/task.h"
#include "kernel/wake_flags.h"

namespace wakesim {

class Scheduler;

// What a placement hook sees: select_task_rq_fair's arguments plus the waker.
struct SelectCtx {
    const Scheduler& sched;
    const Task& p;      // the wakee
    const Task* waker;  // `current`, nullptr for a wake from interrupt/timer context
    int this_cpu;
    int prev;
    uint32_t wake_flags;
    bool sync;
};

// What the FUSE io-uring queue hook sees when a background request is queued
// (fuse_uring_queue_bq_req -> fuse_uring_task_to_queue). Queues are indexed 0..n-1.
struct FuseQueueCtx {
    const Scheduler& sched;
    const Task& current;                  // the submitter
    int cpu;                              // task_cpu(current)
    int mainline;                         // the queue mainline picks: the one of `cpu`
    const std::vector<int>& queue_cpu;    // each queue's CPU (its ring thread is pinned there)
    const std::vector<int>& nr_reqs;      // each queue's requests queued or being served (the series' nr_reqs)
    RngStream& rng;                       // the run's seeded stream for random queue choices
};

// Per-task state owned by a policy, indexed by task id; sized as tasks are created.
template <class T>
class PerTask {
public:
    void created(const Task& t) {
        if (static_cast<size_t>(t.id) >= v_.size()) v_.resize(static_cast<size_t>(t.id) + 1);
    }
    T& operator[](const Task& t) { return v_[static_cast<size_t>(t.id)]; }
    const T& operator[](const Task& t) const { return v_[static_cast<size_t>(t.id)]; }

private:
    std::vector<T> v_;
};

class WakePolicy {
public:
    virtual ~WakePolicy() = default;
    virtual std::string name() const = 0;
    // The flags passed at `site`; `flags` is what mainline (or an earlier policy) passes.
    virtual uint32_t site_flags(const WakeSite& /*site*/, uint32_t flags) const { return flags; }
    // A CPU to place the wakee on, or -1 to continue with the kernel's path.
    virtual int early(const SelectCtx&) { return -1; }
    virtual int in_feec(const SelectCtx&) { return -1; }
    virtual int after_wake_affine(const SelectCtx&, int /*new_cpu*/) { return -1; }
    // The io-uring queue of a background FUSE request, or -1 for mainline's.
    virtual int fuse_bg_queue(const FuseQueueCtx&) { return -1; }
    virtual void on_task_created(Task&) {}
    virtual void on_block(Task&, Time /*now*/) {}  // the task is about to sleep
    virtual void on_run(Task&, Time /*now*/) {}    // the task got a CPU back
};

// The policy of one run: its parts in composition order. Flags fold through every part; the
// first placement hook that names an allowed CPU wins (the scheduler walks `rules`).
class PolicyRun {
public:
    std::vector<std::unique_ptr<WakePolicy>> rules;

    uint32_t site_flags(const WakeSite& site) const {
        uint32_t f = site.kernel_flags;
        for (const auto& r : rules) f = r->site_flags(site, f);
        return f;
    }
    // The first part that names a valid queue wins; mainline's otherwise.
    int fuse_bg_queue(const FuseQueueCtx& c) const {
        for (const auto& r : rules) {
            const int q = r->fuse_bg_queue(c);
            if (q >= 0 && static_cast<size_t>(q) < c.queue_cpu.size()) return q;
        }
        return c.mainline;
    }
    void on_task_created(Task& t) const {
        for (const auto& r : rules) r->on_task_created(t);
    }
    void on_block(Task& t, Time now) const {
        for (const auto& r : rules) r->on_block(t, now);
    }
    void on_run(Task& t, Time now) const {
        for (const auto& r : rules) r->on_run(t, now);
    }
};

}  // namespace wakesim
