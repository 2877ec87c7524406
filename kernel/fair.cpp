// kernel/sched/fair.c, the EEVDF part, in fair.c's order: avg_vruntime, entity_eligible,
// pick_eevdf, update_curr (with update_deadline), place_entity, enqueue_entity, dequeue_entity,
// check_preempt_wakeup_fair (set_protect_slice is inline in kernel/sched.h). One flat runqueue per CPU (no cgroups).
#include <algorithm>

#include "kernel/sched.h"

namespace wakesim {

namespace {

__extension__ typedef __int128 i128;  // weighted vruntime sums overflow 64 bits

// The weighted vruntime sum of a runqueue, relative to its first entity (avg_vruntime()).
struct VSum {
    int64_t base = 0;
    i128 sum = 0;
    int64_t w = 0;
    // vruntime <= V  <=>  (v - base) * W <= sum(w_i (v_i - base))
    bool eligible(const Task& t) const { return w == 0 || static_cast<i128>(t.vruntime - base) * w <= sum; }
    // A 64-bit division when the sum fits (the same quotient; the 128-bit one is a library call).
    int64_t avg() const {
        if (w == 0) return base;
        if (sum >= INT64_MIN && sum <= INT64_MAX) return base + static_cast<int64_t>(sum) / w;
        return base + static_cast<int64_t>(sum / w);
    }
};

VSum vsum(const std::vector<Task*>& queue) {
    VSum v;
    if (queue.empty()) return v;
    v.base = queue.front()->vruntime;
    for (const Task* t : queue) {
        v.sum += static_cast<i128>(t->vruntime - v.base) * t->weight;
        v.w += t->weight;
    }
    return v;
}

}  // namespace

int64_t Scheduler::avg_vruntime(const Rq& rq) const { return rq.queue.empty() ? 0 : vsum(rq.queue).avg(); }

bool Scheduler::entity_eligible(const Rq& rq, const Task& t) const { return vsum(rq.queue).eligible(t); }

Task* Scheduler::pick_eevdf(Rq& rq, bool protect) {
    if (rq.queue.empty()) return nullptr;
    if (rq.queue.size() == 1) return rq.queue.front();
    const VSum v = vsum(rq.queue);
    auto eligible = [&](const Task* e) { return v.eligible(*e); };
    // PICK_BUDDY: the next buddy, when eligible, goes first (latency, not fairness).
    if (rq.next_buddy && cfg_.features.on(Feat::PICK_BUDDY) && eligible(rq.next_buddy)) return rq.next_buddy;
    Task* curr = rq.curr;
    // (A curr the active-balance stopper moved away is queued on another CPU now.)
    if (curr && !(curr->on_rq && &rq_of(curr->cpu) == &rq && curr->state != TaskState::sleeping && eligible(curr)))
        curr = nullptr;
    if (curr && protect && curr->vruntime < curr->vprot) return curr;
    Task* best = nullptr;
    for (Task* e : rq.queue)
        if (eligible(e) && (!best || e->deadline < best->deadline)) best = e;
    if (!best)  // rounding can leave none eligible: take the smallest vruntime
        for (Task* e : rq.queue)
            if (!best || e->vruntime < best->vruntime) best = e;
    if (curr && curr->deadline < best->deadline) best = curr;
    return best;
}

// update_curr(): only where fair.c calls it (tick, enqueue, dequeue, wakeup check, pick), never
// at the machine's own step boundaries. Between those points the running task's vruntime is stale,
// as the kernel's is: requeue_delayed_entity() and place_entity() read it so.
void Scheduler::update_curr(int cpu) {
    Rq& rq = rq_of(cpu);
    Task* t = rq.curr;
    if (!t || rq.switching) return;
    const Time now = engine_.now();
    const int64_t delta = now - t->exec_start;
    if (delta > 0) {
        t->exec_start = now;
        t->sum_exec += delta;
        t->vruntime += calc_delta_fair(delta, *t);
    }
    bool resched = false;
    if (t->vruntime >= t->deadline) {  // update_deadline()
        t->deadline = t->vruntime + calc_delta_fair(t->slice, *t);
        resched = true;
    }
    // nr_queued counts delayed entities; an expired protection also asks for a new pick, with
    // resched_curr(): from another CPU (an enqueue or wakeup check there) that is the IPI.
    if (rq.nr_running > 1 && (resched || t->vruntime >= t->vprot) && !rq.need_resched) resched_curr(cpu);
}

void Scheduler::place_entity(Rq& rq, Task& t, bool initial) {
    int64_t vslice = calc_delta_fair(t.slice, t);
    int64_t V = rq.queue.empty() ? t.vruntime : avg_vruntime(rq);
    int64_t lag = 0;
    if (cfg_.features.on(Feat::PLACE_LAG) && !rq.queue.empty()) {
        int64_t W = 0;
        for (const Task* e : rq.queue) W += e->weight;
        lag = static_cast<int64_t>(static_cast<i128>(t.vlag) * (W + t.weight) / W);
    }
    if (rq.queue.empty()) {
        // An empty runqueue has no V; keep the task's own clock so its lag stays meaningful.
        V = t.vruntime + t.vlag;
    }
    t.vruntime = V - lag;
    if (initial && cfg_.features.on(Feat::PLACE_DEADLINE_INITIAL)) vslice /= 2;
    t.deadline = t.vruntime + vslice;
}

// enqueue_entity() + enqueue_task_fair()'s accounting and cpufreq_update_util().
void Scheduler::enqueue(int cpu, Task& t, bool initial) {
    Rq& rq = rq_of(cpu);
    update_curr_around(cpu, t);  // enqueue_entity()
    pelt_update_cpu(cpu);
    place_entity(rq, t, initial);
    rq.queue.push_back(&t);
    t.cfs_seq = ++cfs_seq_;  // account_entity_enqueue(): list_add at the head of cfs_tasks
    t.on_rq = true;
    ++rq.nr_running;
    rq.runnable_weight += t.weight;
    util_est_enqueue(rq, t);
    if (t.policy == SchedPolicy::idle) ++rq.nr_sched_idle;
    update_overload(cpu);
    hw_.util_changed(cpu);
}

// dequeue_entity() (final: a delayed entity leaves here too) with the lag it keeps.
void Scheduler::dequeue(int cpu, Task& t) {
    Rq& rq = rq_of(cpu);
    update_curr_around(cpu, t);  // dequeue_entity()
    pelt_update_cpu(cpu);
    int64_t lag = entity_lag(rq, t);
    if (t.sched_delayed) {
        if (cfg_.features.on(Feat::DELAY_ZERO) && lag > 0) lag = 0;
        clear_delayed(rq, t);
    } else {
        rq.runnable_weight -= t.weight;
        util_est_dequeue(rq, t);
    }
    if (t.policy == SchedPolicy::idle) --rq.nr_sched_idle;
    t.vlag = lag;
    if (rq.next_buddy == &t) rq.next_buddy = nullptr;  // clear_buddies()
    queue_erase(rq, t);
    t.on_rq = false;
    --rq.nr_running;
    update_overload(cpu);
    hw_.util_changed(cpu);
}

// update_curr() of the CPU an entity joins or leaves, unless that entity is its running task
// (it has just been updated by its own block or exit) or the CPU is inside schedule().
void Scheduler::update_curr_around(int cpu, const Task& t) {
    const Rq& rq = rq_of(cpu);
    if (rq.curr && rq.curr != &t && rq.curr->state == TaskState::running) update_curr(cpu);
}

// update_entity_lag(): V - vruntime, clamped to a slice's worth (at least a tick) either way.
int64_t Scheduler::entity_lag(const Rq& rq, const Task& t) const {
    const int64_t limit = calc_delta_fair(std::max<int64_t>(2 * t.slice, tick_ns_), t);
    return std::clamp(avg_vruntime(rq) - t.vruntime, -limit, limit);
}

// __dequeue_entity(): out of the queue (and so out of V).
void Scheduler::queue_erase(Rq& rq, const Task& t) {
    auto it = std::find(rq.queue.begin(), rq.queue.end(), &t);
    if (it != rq.queue.end()) rq.queue.erase(it);
}

// clear_delayed(): a delayed entity is no longer delayed (woken, or dequeued for good).
void Scheduler::clear_delayed(Rq& rq, Task& t) {
    t.sched_delayed = false;
    --rq.nr_delayed;
}

// requeue_delayed_entity(): a delayed sleeper woken while still queued. With DELAY_ZERO, one
// that is owed service again (positive lag: V moved past it while it waited) loses that lag and
// is placed afresh at V with a new deadline, as a new arrival would be.
void Scheduler::requeue_delayed_entity(int cpu, Task& t) {
    Rq& rq = rq_of(cpu);
    if (cfg_.features.on(Feat::DELAY_ZERO)) {
        t.vlag = entity_lag(rq, t);
        if (t.vlag > 0) {
            t.vlag = 0;
            queue_erase(rq, t);  // V without it
            place_entity(rq, t, false);
            rq.queue.push_back(&t);
        }
    }
    clear_delayed(rq, t);
}

// check_preempt_wakeup_fair(), v6.19, with NEXT_BUDDY as "sched/fair: Reimplement NEXT_BUDDY to
// align with EEVDF goals" (Mel Gorman, Nov 2025) made it: the wakee becomes the next buddy unless
// the buddy already set has an earlier deadline, and only then does WF_SYNC weigh in
// (preempt_sync()).
bool Scheduler::check_preempt_wakeup_fair(int cpu, Task& p, uint32_t flags) {
    Rq& rq = rq_of(cpu);
    Task* se = rq.curr;
    if (!se) return true;  // the idle class: any fair wakee runs at once
    if (se == &p || rq.need_resched) return false;
    if (!cfg_.features.on(Feat::WAKEUP_PREEMPTION)) return false;
    const bool se_idle = se->policy == SchedPolicy::idle;
    const bool p_idle = p.policy == SchedPolicy::idle;
    if (se_idle && !p_idle) {
        se->vprot = se->vruntime;
        return true;
    }
    if (se_idle != p_idle) return false;
    if (p.policy == SchedPolicy::batch || p.policy == SchedPolicy::idle) return false;
    update_curr(cpu);
    bool protect = true;
    if (cfg_.features.on(Feat::PREEMPT_SHORT) && p.slice < se->slice) {
        protect = false;
    } else if ((flags & WF_FORK) || p.sched_delayed) {
        return false;
    } else if (cfg_.features.on(Feat::NEXT_BUDDY) && (!rq.next_buddy || rq.next_buddy->deadline >= p.deadline)) {
        rq.next_buddy = &p;  // set_preempt_buddy()
        if (flags & WF_SYNC) {
            // preempt_sync(): the waker is expected to sleep; preempt it only once it has run
            // migration_cost (a quarter of it when select_task_rq put the wakee here) and the
            // wakee's deadline is earlier. update_curr() above has just restarted exec_start.
            const int64_t delta = std::max<int64_t>(0, engine_.now() - se->exec_start);
            const int64_t threshold = (flags & WF_RQ_SELECTED) ? cfg_.migration_cost_ns / 4 : cfg_.migration_cost_ns;
            return p.deadline < se->deadline && delta >= threshold;
        }
    }
    if (pick_eevdf(rq, protect) == &p) {
        if (!protect) se->vprot = se->vruntime;
        return true;
    }
    if (cfg_.features.on(Feat::RUN_TO_PARITY))
        se->vprot = std::min(se->vprot, se->vruntime + calc_delta_fair(slice_ns_, *se));
    return false;
}

}  // namespace wakesim
