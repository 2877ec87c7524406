// kernel/sched/fair.c, the EEVDF part, in fair.c's order: avg_vruntime, entity_eligible,
// pick_eevdf, update_curr (with update_deadline), place_entity, enqueue_entity, dequeue_entity,
// the group entity's share (update_cfs_group, reweight_entity),
// check_preempt_wakeup_fair (set_protect_slice is inline in kernel/sched.h; pick_task_fair is in
// kernel/core.cpp, next to __schedule(), which inlines it). Task groups are one
// level deep: the root runqueue holds tasks and groups' entities, a group's runqueue its tasks.
#include <algorithm>

#include "kernel/pelt.h"
#include "kernel/sched.h"

namespace wakesim {

namespace {

using i128 = Int128;

// The weighted vruntime sum of a runqueue, relative to its first entity (avg_vruntime()).
struct VSum {
    int64_t base = 0;
    i128 sum = 0;
    int64_t w = 0;
    // vruntime <= V  <=>  (v - base) * W <= sum(w_i (v_i - base))
    bool eligible(const SchedEntity& e) const { return w == 0 || static_cast<i128>(e.vruntime - base) * w <= sum; }
    // Truncated towards base, the first queued entity. The kernel's avg_vruntime() rounds down
    // ("sign flips effective floor / ceiling") so that an entity placed at V without lag is
    // eligible; the model does not yet (docs/validation.md, "EEVDF's pick and update_curr() read
    // again"). A 64-bit division when the sum fits (the 128-bit one is a library call).
    int64_t avg() const {
        if (w == 0) return base;
        if (sum >= INT64_MIN && sum <= INT64_MAX) return base + static_cast<int64_t>(sum) / w;
        return base + static_cast<int64_t>(sum / w);
    }
};

// sum(w_i (v_i - base)) = sum(w_i v_i) - base sum(w_i): the runqueue's sums give it at once.
VSum vsum(const CfsRq& cfs) {
    VSum v;
    if (cfs.queue.empty()) return v;
    v.base = cfs.queue.front()->vruntime;
    v.sum = cfs.vw_sum - static_cast<i128>(cfs.w_sum) * v.base;
    v.w = cfs.w_sum;
    return v;
}

}  // namespace

int64_t Scheduler::avg_vruntime(const CfsRq& cfs) const { return cfs.queue.empty() ? 0 : vsum(cfs).avg(); }

bool Scheduler::entity_eligible(const CfsRq& cfs, const SchedEntity& se) const { return vsum(cfs).eligible(se); }

SchedEntity* Scheduler::curr_on(const Rq& rq, const CfsRq& cfs) const {
    const Task* t = rq.curr;
    if (!t || &rq_of(t->cpu) != &rq) return nullptr;  // (the active-balance stopper moved it away)
    if (t->group < 0 || cfs.group == t->group) {
        if (&cfs_of(*t, t->cpu) != &cfs || !t->on_rq || t->state == TaskState::sleeping) return nullptr;
        return const_cast<Task*>(t);
    }
    // The root: the running task's group entity stays cfs_rq->curr until the next pick.
    if (cfs.se) return nullptr;
    SchedEntity* g = cfs_of(*t, t->cpu).se;
    return g->on_rq ? g : nullptr;
}

SchedEntity* Scheduler::pick_eevdf(CfsRq& cfs, bool protect, const Rq& rq) {
    if (cfs.queue.empty()) return nullptr;
    if (cfs.queue.size() == 1) return cfs.queue.front();
    const VSum v = vsum(cfs);
    auto eligible = [&](const SchedEntity* e) { return v.eligible(*e); };
    // PICK_BUDDY: the next buddy, when eligible, goes first (latency, not fairness).
    if (cfs.next && cfg_.features.on(Feat::PICK_BUDDY) && eligible(cfs.next)) return cfs.next;
    SchedEntity* const running = curr_on(rq, cfs);
    SchedEntity* curr = running && eligible(running) ? running : nullptr;
    if (curr && protect && curr->vruntime < curr->vprot) return curr;
    // The tree's earliest eligible deadline, the first queued among equals; the running entity is
    // not in the tree (set_next_entity() took it out) and wins only with an earlier deadline.
    SchedEntity* best = nullptr;
    for (SchedEntity* e : cfs.queue)
        if (e != running && eligible(e) && (!best || e->deadline < best->deadline)) best = e;
    if (!best || (curr && curr->deadline < best->deadline)) best = curr;
    if (!best)  // a guard: the test is exact, so the entity of least vruntime is always eligible
        for (SchedEntity* e : cfs.queue)
            if (!best || e->vruntime < best->vruntime) best = e;
    return best;
}

// update_curr(): only where fair.c calls it (tick, enqueue, dequeue, wakeup check, pick), never
// at the machine's own step boundaries. Between those points the running task's vruntime is stale,
// as the kernel's is: requeue_delayed_entity() and place_entity() read it so. In a task group the
// group's entity is charged the same runtime at its own weight (each level's update_curr(); here
// always both together).
void Scheduler::update_curr(int cpu) {
    Rq& rq = rq_of(cpu);
    Task* t = rq.curr;
    if (!t || rq.switching) return;
    const Time now = engine_.now();
    const int64_t delta = now - t->exec_start;
    if (delta <= 0) return;  // no time has passed: nothing to charge, no new pick asked for
    t->exec_start = now;
    t->sum_exec += delta;
    advance_vruntime(*t, calc_delta_fair(delta, *t));
    // update_deadline(), then a new pick when the slice or the protection is used up, per level
    // (nr_queued counts delayed entities); such a level also stops favouring its running entity
    // (clear_buddies()). From another CPU (an enqueue or wakeup check there) resched_curr() is the IPI.
    CfsRq& cfs = t->group < 0 ? rq.cfs : cfs_of(*t, cpu);
    bool resched = update_deadline(*t, cfs);
    if (resched) clear_buddies(cpu, cfs, *t);
    if (cfs.se && cfs.se->on_rq) {
        SchedEntity& g = *cfs.se;
        advance_vruntime(g, calc_delta_fair(delta, g));
        if (update_deadline(g, rq.cfs)) {
            resched = true;
            clear_buddies(cpu, rq.cfs, g);
        }
    }
    if (resched && !rq.need_resched) resched_curr(cpu);
}

void Scheduler::place_entity(CfsRq& cfs, SchedEntity& se, bool initial) {
    int64_t vslice = calc_delta_fair(se.slice, se);
    int64_t V = cfs.queue.empty() ? se.vruntime : avg_vruntime(cfs);
    int64_t lag = 0;
    if (cfg_.features.on(Feat::PLACE_LAG) && !cfs.queue.empty()) {
        const int64_t W = cfs.w_sum;
        lag = static_cast<int64_t>(static_cast<i128>(se.vlag) * (W + se.weight) / W);
    }
    if (cfs.queue.empty()) {
        // An empty runqueue has no V; keep the entity's own clock so its lag stays meaningful.
        V = se.vruntime + se.vlag;
    }
    se.vruntime = V - lag;
    if (se.rel_deadline) {
        se.deadline += se.vruntime;
        se.rel_deadline = false;
        return;
    }
    if (initial && cfg_.features.on(Feat::PLACE_DEADLINE_INITIAL)) vslice /= 2;
    se.deadline = se.vruntime + vslice;
}

// enqueue_task_fair(): enqueue_entity() on the task's runqueue, then up the hierarchy: the group's
// entity joins the root, or is requeued if it was left there delayed; the accounting and
// cpufreq_update_util(). A delayed sleeper moved by the balancer arrives still delayed: queued
// (load, nr_running) but not runnable and without its util_est.
void Scheduler::enqueue(int cpu, Task& t, bool initial, bool delayed) {
    Rq& rq = rq_of(cpu);
    // enqueue_entity() updates the runqueue it enqueues into: the task's own, whose running entity
    // is the CPU's running task only if that task queues there too, and the root only when the
    // group's entity joins it. A group entity left delayed is requeued without an update:
    // requeue_delayed_entity() measures its lag against the running entity as last updated.
    if (t.group < 0 || !rq.curr || rq.curr->group == t.group || !cfs_of(t, cpu).se->on_rq)
        update_curr_around(cpu, t);  // enqueue_entity()
    pelt_update_cpu(cpu);
    // enqueue_entity()'s update_load_avg() of the task, before it is on_rq: a wait on a remote
    // wake list (the IPI, the target's idle exit) is neither load nor runnable time. A task a
    // wakeup migrated is attached instead, at this runqueue's time, not aged; first, so that its
    // group's entity takes its load up just below (propagate_entity_load_avg()).
    const bool attach = t.pelt.attach_pending;
    if (attach) pelt_attach(t, cpu);
    if (t.group >= 0) pelt_update_group(cpu, t.group);  // update_load_avg() of its group's runqueue
    if (!attach) pelt_update_task(t, false, false);
    CfsRq& cfs = cfs_of(t, cpu);
    place_entity(cfs, t, initial);
    queue_add(cfs, t);
    t.cfs_seq = ++cfs_seq_;  // account_entity_enqueue(): list_add at the head of cfs_tasks
    t.on_rq = true;
    ++rq.nr_running;
    if (delayed) {
        t.sched_delayed = true;
        ++rq.nr_delayed;
    } else {
        util_est_enqueue(rq, t);
    }
    if (t.policy == SchedPolicy::idle) ++rq.nr_sched_idle;
    cfs.load_weight += t.weight;
    if (cfs.se) enqueue_group_se(cpu, cfs);
    update_overload(cpu);
    cpufreq_update_util(cpu);
    if (!initial) check_update_overutilized_status(cpu);  // enqueue_task_fair(): not for a new task
}

// dequeue_entity() (final: a delayed entity leaves here too) with the lag it keeps. A group's
// runqueue left empty takes the group's entity off the root as a sleep (dequeue_entities() sets
// DEQUEUE_SLEEP for the parents), so DELAY_DEQUEUE may leave it there.
void Scheduler::dequeue(int cpu, Task& t, bool sleep) {
    Rq& rq = rq_of(cpu);
    // As at enqueue: the task's own runqueue, and the root only when the group's entity leaves it.
    if (t.group < 0 || !rq.curr || rq.curr->group == t.group || cfs_of(t, cpu).queue.size() == 1)
        update_curr_around(cpu, t);  // dequeue_entity()
    pelt_update_cpu(cpu);
    if (t.group >= 0) pelt_update_group(cpu, t.group);
    CfsRq& cfs = cfs_of(t, cpu);
    int64_t lag = entity_lag(cfs, t);
    if (t.sched_delayed) {
        pelt_update_task(t, false, false);  // dequeue_entity()'s update_load_avg(): the delay counted as load
        // finish_delayed_dequeue_entity(): only the final dequeue, not a migration's.
        if (sleep && cfg_.features.on(Feat::DELAY_ZERO) && lag > 0) lag = 0;
        t.sched_delayed = false;
        --rq.nr_delayed;
    } else {
        util_est_dequeue(rq, t);
    }
    if (t.policy == SchedPolicy::idle) --rq.nr_sched_idle;
    t.vlag = lag;
    if (!sleep && cfg_.features.on(Feat::PLACE_REL_DEADLINE)) {
        t.deadline -= t.vruntime;
        t.rel_deadline = true;
    }
    clear_buddies(cpu, cfs, t);
    queue_erase(cfs, t);
    t.on_rq = false;
    --rq.nr_running;
    cfs.load_weight -= t.weight;
    if (cfs.se) {
        if (cfs.queue.empty()) {
            dequeue_group_se(cpu, cfs, true);
        } else {
            update_cfs_group(cpu, cfs);
            // A sleeper's group keeps the CPU's favour: set_next_buddy() of the parent.
            if (sleep) rq.cfs.next = cfs.se;
        }
    }
    update_overload(cpu);
    cpufreq_update_util(cpu);
}

// The group's entity joins the root when its first task arrives on this CPU (enqueue_entity()
// with ENQUEUE_WAKEUP: placed with the lag it kept), or is requeued when it was left delayed;
// then its weight follows the group's load here (update_cfs_group()) and its slice the shortest
// queued one (cfs_rq_min_slice()).
void Scheduler::enqueue_group_se(int cpu, CfsRq& gq) {
    SchedEntity& g = *gq.se;
    CfsRq& root = rq_of(cpu).cfs;
    int64_t slice = INT64_MAX;
    for (const SchedEntity* e : gq.queue) slice = std::min(slice, e->slice);
    if (!g.on_rq) {
        g.slice = slice;
        update_cfs_group(cpu, gq);  // reweight_entity() off the queue: the kept lag scaled too
        place_entity(root, g, false);
        queue_add(root, g);
        g.on_rq = true;
        root.load_weight += g.weight;  // account_entity_enqueue()
        return;
    }
    if (g.sched_delayed) requeue_delayed_entity(root, g);
    g.slice = slice;
    update_cfs_group(cpu, gq);
}

void Scheduler::dequeue_group_se(int cpu, CfsRq& gq, bool sleep) {
    SchedEntity& g = *gq.se;
    CfsRq& root = rq_of(cpu).cfs;
    if (!g.on_rq) return;
    clear_buddies(cpu, root, g);  // delayed or not, as for a task
    if (sleep && !g.sched_delayed && cfg_.features.on(Feat::DELAY_DEQUEUE) && root.queue.size() > 1 &&
        !entity_eligible(root, g)) {
        g.sched_delayed = true;  // an ineligible group sleeps on the queue, as a task would
        return;
    }
    int64_t lag = entity_lag(root, g);
    if (g.sched_delayed && cfg_.features.on(Feat::DELAY_ZERO) && lag > 0) lag = 0;
    g.sched_delayed = false;
    g.vlag = lag;
    queue_erase(root, g);
    g.on_rq = false;
    root.load_weight -= g.weight;  // account_entity_dequeue(), after the callers' update_load_avg()
}

// update_cfs_group() with calc_group_shares(), at least MIN_SHARES. A change of weight on the
// queue is reweight_entity(): the lag and the relative deadline keep their weighted sizes, and
// the entity is placed again.
void Scheduler::update_cfs_group(int cpu, CfsRq& gq) {
    SchedEntity& g = *gq.se;
    const TaskGroupState& tg = groups_[static_cast<size_t>(gq.group)];
    if (gq.load_weight == 0) return;  // an emptied group keeps its weight (DELAY_DEQUEUE)
    // calc_group_shares(): tg->shares x this runqueue's load over the group's, where the load here
    // is the larger of the weight queued and its average, and the group's is tg->load_avg with
    // this runqueue's part replaced by that load.
    const GroupCpu& gc = tg.cpu[static_cast<size_t>(cpu)];
    const auto load = static_cast<int64_t>(std::max(static_cast<double>(gq.load_weight), gc.avg.load_avg));
    const int64_t tg_weight = static_cast<int64_t>(tg.load_avg) - static_cast<int64_t>(gc.tg_contrib) + load;
    int64_t shares = static_cast<int64_t>(tg.shares) * load;
    if (tg_weight > 0) shares /= tg_weight;
    const auto w = static_cast<uint32_t>(std::clamp<int64_t>(shares, 2, tg.shares));
    if (w == g.weight) return;
    reweight_gse_load(cpu, gq.group, w);
    if (!g.on_rq) {
        g.vlag = g.vlag * static_cast<int64_t>(g.weight) / static_cast<int64_t>(w);
        g.weight = w;
        return;
    }
    Rq& rq = rq_of(cpu);
    CfsRq& root = rq.cfs;
    // reweight_entity() commits the root's outstanding execution time first (update_curr()).
    if (rq.curr && rq.curr->state == TaskState::running) update_curr(cpu);
    const int64_t lag = entity_lag(root, g);
    const int64_t rel_deadline = g.deadline - g.vruntime;
    const int64_t rel_prot = g.vprot - g.vruntime;
    // The running entity stays in V (at its new weight) while it is placed, and so counts twice
    // in PLACE_LAG's load, as cfs_rq->curr does in the kernel; any other leaves the queue first.
    const bool running = curr_on(rq, root) == &g;
    if (!running) queue_erase(root, g);
    g.vlag = lag * static_cast<int64_t>(g.weight) / static_cast<int64_t>(w);
    const int64_t deadline = rel_deadline * static_cast<int64_t>(g.weight) / static_cast<int64_t>(w);
    const int64_t prot = rel_prot * static_cast<int64_t>(g.weight) / static_cast<int64_t>(w);
    if (running) {  // it stays in the sums, at its new weight
        root.vw_sum += (static_cast<i128>(w) - g.weight) * g.vruntime;
        root.w_sum += static_cast<int64_t>(w) - static_cast<int64_t>(g.weight);
    }
    g.weight = w;
    const int64_t before = g.vruntime;
    place_entity(root, g, false);
    if (running) root.vw_sum += static_cast<i128>(w) * (g.vruntime - before);
    g.deadline = g.vruntime + deadline;
    g.vprot = g.vruntime + prot;
    if (!running) queue_add(root, g);
}

// update_curr() of the CPU an entity joins or leaves, unless that entity is its running task
// (it has just been updated by its own block or exit) or the CPU is inside schedule().
void Scheduler::update_curr_around(int cpu, const Task& t) {
    const Rq& rq = rq_of(cpu);
    if (rq.curr && rq.curr != &t && rq.curr->state == TaskState::running) update_curr(cpu);
}

// update_entity_lag(): V - vruntime, clamped to a slice's worth (at least a tick) either way.
int64_t Scheduler::entity_lag(const CfsRq& cfs, const SchedEntity& se) const {
    const int64_t limit = calc_delta_fair(std::max<int64_t>(2 * se.slice, tick_ns_), se);
    return std::clamp(avg_vruntime(cfs) - se.vruntime, -limit, limit);
}

// __dequeue_entity(): out of the queue (and so out of V).
void Scheduler::queue_erase(CfsRq& cfs, SchedEntity& se) {
    auto it = std::find(cfs.queue.begin(), cfs.queue.end(), &se);
    if (it == cfs.queue.end()) return;
    cfs.queue.erase(it);
    se.queued_on = nullptr;
    cfs.vw_sum -= static_cast<i128>(se.weight) * se.vruntime;
    cfs.w_sum -= se.weight;
}

// requeue_delayed_entity(): a delayed sleeper woken while still queued. With DELAY_ZERO, one
// that is owed service again (positive lag: V moved past it while it waited) loses that lag and
// is placed afresh at V with a new deadline, as a new arrival would be.
void Scheduler::requeue_delayed_entity(CfsRq& cfs, SchedEntity& se) {
    if (cfg_.features.on(Feat::DELAY_ZERO)) {
        se.vlag = entity_lag(cfs, se);
        if (se.vlag > 0) {
            se.vlag = 0;
            queue_erase(cfs, se);  // V without it
            place_entity(cfs, se, false);
            queue_add(cfs, se);
        }
    }
    se.sched_delayed = false;
}


// check_preempt_wakeup_fair(), v6.19, with NEXT_BUDDY as "sched/fair: Reimplement NEXT_BUDDY to
// align with EEVDF goals" (Mel Gorman, Nov 2025) made it: the wakee becomes the next buddy unless
// the buddy already set has an earlier deadline, and only then does WF_SYNC weigh in
// (preempt_sync()).
bool Scheduler::check_preempt_wakeup_fair(int cpu, Task& p, uint32_t flags) {
    Rq& rq = rq_of(cpu);
    Task* curr = rq.curr;
    if (!curr) return true;  // the idle class: any fair wakee runs at once
    if (curr == &p || rq.need_resched) return false;
    if (!cfg_.features.on(Feat::WAKEUP_PREEMPTION)) return false;
    // find_matching_se(): compare the two where their paths meet: in their group's runqueue when
    // they share one, else their top entities in the root (a group's entity is not idle).
    SchedEntity* se = curr;
    SchedEntity* pse = &p;
    CfsRq* cfs = &cfs_of(p, cpu);
    bool se_idle = curr->policy == SchedPolicy::idle;
    bool p_idle = p.policy == SchedPolicy::idle;
    if (curr->group != p.group) {
        cfs = &rq.cfs;
        if (curr->group >= 0) {
            se = cfs_of(*curr, cpu).se;
            se_idle = false;
        }
        if (p.group >= 0) {
            pse = cfs_of(p, cpu).se;
            p_idle = false;
        }
    }
    if (se_idle && !p_idle) {
        se->vprot = se->vruntime;
        return true;
    }
    if (se_idle != p_idle) return false;
    if (p.policy == SchedPolicy::batch || p.policy == SchedPolicy::idle) return false;
    update_curr(cpu);
    bool protect = true;
    if (cfg_.features.on(Feat::PREEMPT_SHORT) && pse->slice < se->slice) {
        protect = false;
    } else if ((flags & WF_FORK) || pse->sched_delayed) {
        return false;
    } else if (cfg_.force_wakeup_preemption && wake_in_task_ && !entity_eligible(*cfs, *se)) {
        return true;  // v6.19-rc: "Reschedule if waker is no longer eligible"
    } else if (cfg_.features.on(Feat::NEXT_BUDDY) && (!cfs->next || cfs->next->deadline >= pse->deadline)) {
        cfs->next = pse;  // set_preempt_buddy(): set_next_buddy() marks every level
        if (cfs->se) rq.cfs.next = cfs->se;
        if (flags & WF_SYNC) {
            // preempt_sync(): the waker is expected to sleep; preempt it only once it has run
            // migration_cost (a quarter of it when select_task_rq put the wakee here) and the
            // wakee's deadline is earlier. update_curr() above has just restarted exec_start.
            const int64_t delta = std::max<int64_t>(0, engine_.now() - curr->exec_start);
            const int64_t threshold = (flags & WF_RQ_SELECTED) ? cfg_.migration_cost_ns / 4 : cfg_.migration_cost_ns;
            return pse->deadline < se->deadline && delta >= threshold;
        }
    }
    if (pick_eevdf(*cfs, protect, rq) == pse) {
        if (!protect) se->vprot = se->vruntime;
        return true;
    }
    if (cfg_.features.on(Feat::RUN_TO_PARITY))
        se->vprot = std::min(se->vprot, se->vruntime + calc_delta_fair(slice_ns_, *se));
    return false;
}

}  // namespace wakesim
