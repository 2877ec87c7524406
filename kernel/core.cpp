// kernel/sched/core.c: the parts the wake path and the CPUs go through, in core.c's order:
// resched_curr, set_task_cpu, select_task_rq, ttwu_do_activate, ttwu_runnable,
// sched_ttwu_pending, ttwu_queue_cond, ttwu_queue, try_to_wake_up, sched_fork (add_task),
// wake_up_new_task, sched_tick, __schedule (schedule, schedule_blocked, do_task_dead), sched_init
// (the constructor, here first). finish_task_switch is inline in kernel/sched.h. The machine's side of an IPI or a
// context switch is behind SchedArch; every decision is reported to the SchedObserver.
#include <cmath>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernel/pelt.h"
#include "kernel/sched.h"

namespace wakesim {

namespace {

// sched_prio_to_weight[], nice -20..19.
constexpr uint32_t kPrioToWeight[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
    1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
    110,   87,    70,    56,    45,    36,    29,    23,    18,    15,
};
constexpr uint32_t kWeightIdlePrio = 3;  // SCHED_IDLE

int ilog2(int v) {
    int r = 0;
    while (v >>= 1) ++r;
    return r;
}

SchedObserver g_no_observer;

}  // namespace

// sched_init(): runqueues, domain state, the LLCs' shared state.
Scheduler::Scheduler(Engine& engine, const Topology& topo, const SchedDomains& sd, const MachineProfile& prof,
                     PolicyRun& policy, SchedConfig cfg, Hardware& hw, uint64_t seed)
    : engine_(engine),
      topo_(topo),
      sd_(sd),
      prof_(prof),
      policy_(policy),
      cfg_(std::move(cfg)),
      hw_(hw),
      obs_(&g_no_observer),
      rng_balance_(seed, "balance") {
    const int n = topo_.nr_cpus();
    rqs_.resize(static_cast<size_t>(n));
    llc_.resize(static_cast<size_t>(n));
    // sysctl_sched_base_slice scales with 1 + ilog2(min(ncpus, 8)) (SCHED_TUNABLESCALING_LOG).
    slice_ns_ = cfg_.base_slice_ns * (1 + ilog2(std::min(n, 8)));
    tick_ns_ = kNsPerSec / std::max<int64_t>(1, prof_.tick_hz);
    for (int c = 0; c < n; ++c) {
        Rq& rq = rq_of(c);
        const auto& dom = sd_.of(c);
        rq.dom.resize(dom.levels.size());
        for (size_t i = 0; i < dom.levels.size(); ++i) rq.dom[i].balance_interval_ms = dom.levels[i].min_interval_ms;
        rq.avg_idle = 2 * cfg_.migration_cost_ns;
        rq.max_idle_balance_cost = cfg_.migration_cost_ns;
        idle_mask_.set(c);
        nohz_idle_.set(c);  // idle since boot, the tick stopped (CpuExec corrects CPUs that keep it)
        LlcShared& sh = llc_[static_cast<size_t>(dom.sd_llc_id)];
        // After boot every core has been idle once, so the hint is set on SMT machines.
        sh.has_idle_cores = sd_.smt_active();
        sh.nr_idle_scan = cfg_.start_sis_scan_full ? dom.sd_llc_size : 0;
    }
    build_perf_domains();
}

void Scheduler::set_observer(SchedObserver* o) {
    obs_ = o ? o : &g_no_observer;
    obs_mask_ = o ? o->interests() : 0;
}

// resched_curr(): set need_resched on the CPU's current task and have the CPU act on it. An idle
// CPU needs nothing: the IPI on its way (or the caller) makes it schedule.
void Scheduler::resched_curr(int cpu) {
    Rq& rq = rq_of(cpu);
    if (!rq.curr || rq.need_resched) return;  // test_tsk_need_resched(): already asked, no second IPI
    rq.need_resched = true;
    if (arch_->smp_send_reschedule(cpu) && wants(kObsReschedIpi)) obs_->resched_ipi(cpu);
}

// set_task_cpu(): a migration (fork placement sets task_cpu directly and is none).
void Scheduler::set_task_cpu(Task& p, int cpu, MigrationCause cause) {
    if (p.cpu == cpu) return;
    const int orig = p.cpu;
    if (orig >= 0) {
        ++p.nr_migrations;
        if (wants(kObsMigrate)) obs_->migrate(p, orig, cpu, cause);
        // migrate_task_rq_fair(): the task's signals leave the old CPU and join the new one.
        pelt_update_cpu(orig);
        pelt_update_cpu(cpu);
        pelt_migrate(p, orig, cpu, cause == MigrationCause::wakeup);
    }
    p.cpu = cpu;
    p.wake_cpu = cpu;
}

// select_task_rq(): the fair class's choice, or the task's only CPU; select_fallback_rq() when
// the choice is not allowed.
int Scheduler::select_task_rq(Task& p, int cpu_hint, uint32_t& flags, const Task* waker, int this_cpu) {
    ++select_calls_;
    explain_ = select_calls_ == explain_nth_;
    steps_ = explain_ || wants(kObsSelectSteps);
    sel_.wakee = p.id;
    sel_.from = p.cpu;
    sel_.outcome = SelectOutcome::kCount;
    sel_.wide = sel_.affine = false;
    sel_.sis_probes = 0;
    if (explain_) obs_->select_begin(p, now());
    int cpu;
    if (p.nr_cpus_allowed > 1 && !p.migration_disabled) {
        cpu = select_task_rq_fair(p, cpu_hint, flags, waker, this_cpu);
        flags |= WF_RQ_SELECTED;
        ++ttwu_work_.select;
    } else {
        cpu = p.allowed.test(p.cpu) ? p.cpu : p.allowed.first();
        select_outcome(SelectOutcome::pinned, cpu);
        if (explain_)
            obs_->pinned({p.migration_disabled, cpu,
                          {p.id, p.comm, cpu_hint, waker ? waker->id : -1, waker ? waker->comm : std::string(), this_cpu,
                           flags}});
    }
    if (!p.allowed.test(cpu)) {  // select_fallback_rq()
        const CpuSet near = p.allowed & topo_.node_span(p.cpu);
        cpu = near.empty() ? p.allowed.first() : near.first();
    }
    sel_.cpu = cpu;
    if (wants(kObsSelectResult) || explain_) obs_->select_task_rq(sel_);
    explain_ = steps_ = false;
    return cpu;
}

// ttwu_do_activate(): enqueue the wakee and check whether it preempts the CPU's current task.
void Scheduler::ttwu_do_activate(int cpu, Task& p, uint32_t flags) {
    Rq& rq = rq_of(cpu);
    if (rq.idle_stamp != 0) {  // the CPU was idle: feed avg_idle
        const int64_t d = now() - rq.idle_stamp;
        rq.avg_idle += (d - rq.avg_idle) / 8;
        rq.avg_idle = std::min(rq.avg_idle, 2 * rq.max_idle_balance_cost);
        rq.idle_stamp = 0;
    }
    if (p.in_iowait) {  // enqueue_task_fair(): cpufreq_update_util(rq, SCHED_CPUFREQ_IOWAIT)
        p.in_iowait = false;
        hw_.iowait_boost(cpu, this_cpu());
    }
    enqueue(cpu, p, false);
    p.state = TaskState::runnable;
    if (wants(kObsTtwuWakeup)) obs_->ttwu_wakeup(p, cpu, rq.curr);
    update_idle_state(cpu);
    if (rq.curr && check_preempt_wakeup_fair(cpu, p, flags)) resched_curr(cpu);
}

// ttwu_runnable(): a delayed-dequeue sleeper is still queued; it is requeued where it is
// (requeue_delayed_entity(), which re-places it under DELAY_ZERO when it is owed service).
void Scheduler::ttwu_runnable(Task& p, uint32_t flags, Task* waker, int this_cpu) {
    Rq& rq = rq_of(p.cpu);
    pelt_update_task(p, false, false);
    pelt_update_cpu(p.cpu);
    requeue_delayed_entity(cfs_of(p, p.cpu), p);
    --rq.nr_delayed;
    util_est_enqueue(rq, p);  // enqueue_task_fair(ENQUEUE_DELAYED) puts it back
    cpufreq_update_util(p.cpu);  // requeue_delayed_entity()'s update_load_avg(): if decayed
    p.state = TaskState::runnable;
    if (wants(kObsTtwuWoken)) obs_->ttwu_woken(p, p.cpu, this_cpu, WokenVia::delayed, nullptr);
    arch_->ttwu_runnable_charge(waker);
    if (wants(kObsTtwuWakeup)) obs_->ttwu_wakeup(p, p.cpu, rq.curr);
    update_idle_state(p.cpu);
    if (check_preempt_wakeup_fair(p.cpu, p, flags)) resched_curr(p.cpu);
}

// sched_ttwu_pending(): the target enqueues the wakees on its wake list itself.
void Scheduler::sched_ttwu_pending(int cpu) {
    Rq& rq = rq_of(cpu);
    if (rq.wake_list.empty()) {
        if (nohz_ilb_ == cpu) nohz_idle_balance(cpu);  // the same IPI may carry a NOHZ kick
        return;
    }
    std::vector<Task*> list;
    list.swap(rq.wake_list);
    rq.ttwu_pending = false;
    {
        const InTaskScope ipi(wake_in_task_, false);  // the IPI handler activates them
        for (Task* p : list) ttwu_do_activate(cpu, *p, WF_TTWU);
    }
    list.clear();
    if (rq.wake_list.empty()) rq.wake_list.swap(list);  // keep the capacity: no allocation next time
    update_idle_state(cpu);
    if (nohz_ilb_ == cpu) nohz_idle_balance(cpu);
}

// ttwu_queue_cond(): the cases in which the target CPU enqueues the wakee itself after an IPI.
bool Scheduler::ttwu_queue_cond(const Task& p, int cpu, int this_cpu) const {
    if (!p.allowed.test(cpu)) return false;
    if (!topo_.shares_llc(this_cpu, cpu)) return true;
    if (cpu == this_cpu) return false;
    if (rq_of(cpu).nr_running == 0) return true;
    return false;
}

// ttwu_queue(): through the target's wake list (ttwu_queue_wakelist) or enqueued by the waker.
WokenVia Scheduler::ttwu_queue(Task& p, int cpu, uint32_t flags, Task* waker, int this_cpu) {
    Rq& rq = rq_of(cpu);
    const bool idle = rq.curr == nullptr;
    if (cfg_.features.on(Feat::TTWU_QUEUE) && ttwu_queue_cond(p, cpu, this_cpu)) {
        // __ttwu_queue_wakelist(): the IPI leaves at the end of the waker's work so far.
        p.state = TaskState::waking;
        rq.wake_list.push_back(&p);
        rq.ttwu_pending = true;
        update_idle_state(cpu);
        ++ttwu_work_.queue_remote;
        ttwu_work_.remote_cpu = cpu;
        const IpiSent sent = arch_->send_call_function_single_ipi(cpu, this_cpu, waker ? &ttwu_work_ : nullptr);
        return sent == IpiSent::ipi ? WokenVia::wakelist_ipi : sent == IpiSent::poll ? WokenVia::wakelist_poll : WokenVia::wakelist;
    }
    ++(cpu == this_cpu ? ttwu_work_.queue_local : ttwu_work_.queue_remote);
    if (cpu != this_cpu) {
        ttwu_work_.remote_cpu = cpu;
        ++ttwu_work_.queue_remote_rq;  // ttwu_do_activate() under the remote rq lock
    }
    ttwu_do_activate(cpu, p, flags);
    // The wakee sits on an idle CPU: a reschedule IPI (or the interrupt being handled there) runs it.
    const IpiSent sent = idle ? arch_->kick_idle_cpu(cpu, this_cpu, IdleKick::ttwu, waker ? &ttwu_work_ : nullptr)
                              : IpiSent::pending;
    if (cpu == this_cpu || sent == IpiSent::pending) return WokenVia::queue;
    return sent == IpiSent::poll ? WokenVia::queue_poll : WokenVia::queue_ipi;
}

bool Scheduler::try_to_wake_up(Task& p, uint32_t flags, Task* waker, int this_cpu) {
    flags |= WF_TTWU;
    // in_task(): a task's own wakeup call; an interrupt or timer has no waker.
    const InTaskScope context(wake_in_task_, waker != nullptr);
    if (p.block_pending && (p.state == TaskState::running || p.state == TaskState::runnable)) {
        // Set to sleep but not yet through schedule() (still running, or preempted on the way):
        // ttwu_runnable() just marks it running again.
        p.block_pending = false;
        if (wants(kObsTtwuWoken)) obs_->ttwu_woken(p, p.cpu, this_cpu, WokenVia::running, nullptr);
        return true;
    }
    if (p.state != TaskState::sleeping) return false;
    ++p.nr_wakeups;
    if (wants(kObsTtwuWaking)) obs_->ttwu_waking(p, waker, this_cpu);
    if (p.on_rq) {
        ttwu_runnable(p, flags, waker, this_cpu);
        return true;
    }
    ttwu_work_ = TtwuWork{};
    ttwu_work_.this_cpu = this_cpu;
    ttwu_work_.wakee = &p;
    const int cpu = select_task_rq(p, p.wake_cpu, flags, waker, this_cpu);
    const SelectResultEv placement = sel_;  // a wakeup nested in ttwu_queue (via a preemption) reuses sel_
    if (cpu != p.cpu) {
        flags |= WF_MIGRATED;
        pelt_sync_leaving(p);
        set_task_cpu(p, cpu, MigrationCause::wakeup);
    } else {
        pelt_update_task(p, false, false);  // the sleep's decay (enqueue_entity()'s update_load_avg())
    }
    const WokenVia via = ttwu_queue(p, cpu, flags, waker, this_cpu);
    if (wants(kObsTtwuWoken)) obs_->ttwu_woken(p, cpu, this_cpu, via, &placement);
    // The waker pays for the whole try_to_wake_up before it continues.
    arch_->ttwu_charge(waker, ttwu_work_);
    return true;
}

// wake_up_process() and friends from a wake site: the policy gives the site's flags. A wake
// from interrupt or timer context (no waker) runs on the wakee's CPU.
bool Scheduler::wake(int wakee, const WakeSite& site, Task* waker, int this_cpu) {
    Task& p = tasks_[static_cast<size_t>(wakee)];
    if (!waker) this_cpu = p.cpu >= 0 ? p.cpu : 0;
    p.in_iowait = site.iowait;
    return try_to_wake_up(p, policy_.site_flags(site), waker, this_cpu);
}

// sched_fork() and __sched_setscheduler(): weight, slice, affinity, policy attributes.
int Scheduler::add_task(const TaskSpec& spec) {
    Task& t = tasks_.emplace_back();
    t.id = static_cast<int>(tasks_.size() - 1);
    t.comm = spec.comm.empty() ? "task" + std::to_string(t.id) : spec.comm;
    for (auto& ch : t.comm)
        if (ch == ' ') ch = '_';
    t.allowed = spec.allowed.empty() ? topo_.all() : (spec.allowed & topo_.all());
    if (t.allowed.empty()) throw std::invalid_argument("task " + t.comm + " has no allowed CPU on this machine");
    t.nr_cpus_allowed = t.allowed.count();
    // set_task_max_allowed_capacity(): only asymmetric machines have capacities to tell apart.
    t.max_allowed_capacity = capacity_of(t.allowed.first());
    if (sd_.asym_active())
        for (int c = t.allowed.first(); c >= 0; c = t.allowed.next(c + 1))
            t.max_allowed_capacity = std::max(t.max_allowed_capacity, capacity_of(c));
    t.nice = std::clamp(spec.nice, -20, 19);
    t.policy = spec.policy;
    t.role = spec.role;
    t.pair_id = spec.pair_id;
    t.per_cpu_kthread = spec.per_cpu_kthread;
    if (spec.fair_group >= 0) {
        // sched_create_group() on first use: an entity and a runqueue per CPU.
        while (groups_.size() <= static_cast<size_t>(spec.fair_group)) {
            TaskGroupState& tg = groups_.emplace_back();
            const int id = static_cast<int>(groups_.size() - 1);
            tg.shares = 0;
            tg.cpu.resize(static_cast<size_t>(topo_.nr_cpus()));
            for (GroupCpu& gc : tg.cpu) {
                gc.se.my_q = &gc.q;  // init_tg_cfs_entry(): weight NICE_0_LOAD until the first update_cfs_group()
                gc.q.se = &gc.se;
                gc.q.group = id;
            }
            // One pending removal per group at most on each CPU: no allocation when tasks move.
            for (Rq& rq : rqs_) rq.removed.reserve(groups_.size());
        }
        TaskGroupState& tg = groups_[static_cast<size_t>(spec.fair_group)];
        if (tg.shares == 0) tg.shares = std::clamp<uint32_t>(spec.group_shares, 2, 1u << 18);
        t.group = spec.fair_group;
    }
    policy_.on_task_created(t);
    t.weight = t.policy == SchedPolicy::idle ? kWeightIdlePrio : kPrioToWeight[t.nice + 20];
    t.slice = slice_ns_;
    t.wakee_flips = spec.wakee_flips;
    t.long_idle = spec.long_idle;
    t.cache.footprint_kib = spec.footprint_kib;
    // uclamp_validate() refuses min > max; the readers checked it, a test harness may not.
    t.uclamp_min = std::clamp(spec.uclamp_min, 0, 1024);
    t.uclamp_max = std::clamp(spec.uclamp_max, t.uclamp_min, 1024);
    if (t.uclamp_min > 0 || t.uclamp_max < 1024) {
        // static_branch_enable(&sched_uclamp_used): from the first clamp on, for the rest of the run.
        uclamp_used_ = true;
        hw_.set_uclamp_used();
    }
    return t.id;
}

// uclamp_rq_get(rq, UCLAMP_MIN/MAX) and uclamp_rq_is_idle(): the highest clamps of the CPU's
// runnable tasks (uclamp_rq_inc()/uclamp_rq_dec() keep them in buckets whose top is the rq's
// value; a sleeper left queued by DELAY_DEQUEUE has already given its clamp up). On demand: only
// runs that use uclamp ask.
RqClamp Scheduler::uclamp_rq(int cpu) const {
    const Rq& rq = rq_of(cpu);
    RqClamp r;
    r.max = 0;
    for_each_queued(rq, [&](const Task* t) {
        if (t->sched_delayed) return;
        r.idle = false;
        r.min = std::max(r.min, t->uclamp_min);
        r.max = std::max(r.max, t->uclamp_max);
    });
    if (r.idle) r.max = rq.uclamp_idle_max;  // uclamp_idle_value(): the max clamp outlives the last task
    return r;
}

// wake_up_new_task(): slow-path placement; __set_task_cpu is not a migration.
void Scheduler::wake_up_new_task(int task, int parent) {
    Task& t = tasks_[static_cast<size_t>(task)];
    t.pelt = Pelt{};  // init_entity_runnable_average(): the child's placement sees no utilisation
    if (!t.long_idle) t.pelt.load_avg = static_cast<double>(t.weight);
    int c;
    if (t.nr_cpus_allowed == 1)
        c = t.allowed.first();
    else if ((prof_.vcpu_pack & 8) && vcpu_pack_room(t, parent))
        c = parent;  // sched_vcpu_pack: the child stays on its parent's vCPU while it has room
    else
        c = sched_balance_find_dst_cpu(t, parent, parent, WF_FORK);
    if (!t.allowed.test(c)) c = t.allowed.first();
    t.cpu = t.wake_cpu = c;
    t.recent_used_cpu = parent;
    if (!t.long_idle) post_init_entity_util_avg(t, c);  // the runqueue's signals as last updated
    t.long_idle = false;  // a thread forked again in this slot later is new
    pelt_update_cpu(c);
    pelt_attach(t, c);  // enqueue_entity()'s update_load_avg(DO_ATTACH)
    Rq& rq = rq_of(c);
    const CfsRq& cfs = cfs_of(t, c);
    t.vruntime = cfs.queue.empty() ? 0 : avg_vruntime(cfs);
    t.vlag = 0;
    enqueue(c, t, true);
    t.state = TaskState::runnable;
    update_idle_state(c);
    if (wants(kObsTtwuWakeup)) obs_->wakeup_new(t, parent, rq_of(parent).curr);
    if (!rq.curr)
        arch_->kick_idle_cpu(c, parent, IdleKick::fork, nullptr);
    else if (check_preempt_wakeup_fair(c, t, WF_FORK))
        resched_curr(c);
}

// sched_tick(): runtime and PELT of the busy CPU, the nohz balancer kick, then the periodic
// balance (sched_balance_trigger() kicks in the tick and raises SCHED_SOFTIRQ, which balances
// on the way out of the interrupt).
void Scheduler::sched_tick(int cpu) {
    Rq& rq = rq_of(cpu);
    update_curr(cpu);
    pelt_update_cpu(cpu);
    if (rq.curr) pelt_update_task(*rq.curr, true, true);
    if (rq.curr && rq.curr->group >= 0) pelt_update_group(cpu, rq.curr->group);  // entity_tick()'s update_load_avg()
    // entity_tick() of the running task's group entity: update_cfs_group().
    if (rq.curr && rq.curr->group >= 0 && rq.curr->on_rq) update_cfs_group(cpu, cfs_of(*rq.curr, cpu));
    cpufreq_update_util(cpu);
    if (rq.curr) update_misfit_status(rq.curr, cpu);  // task_tick_fair()
    if (rq.curr) check_update_overutilized_status(cpu);  // task_tick_fair()
    nohz_balancer_kick(cpu);
    if (now() >= rq.next_balance) {  // sched_balance_softirq()
        update_blocked_averages(cpu);
        sched_balance_domains(cpu, false);
    }
}

// sched_tick() of an idle CPU: sched_balance_trigger() raises SCHED_SOFTIRQ when the CPU's own
// balance is due, and nohz_balancer_kick() returns at once (rq->idle_balance).
void Scheduler::sched_tick_idle(int cpu) {
    if (now() >= rq_of(cpu).next_balance) {  // sched_balance_softirq()
        update_blocked_averages(cpu);
        sched_balance_domains(cpu, available_idle_cpu(cpu));
    }
}

// fair.c pick_task_fair(): pick_eevdf() on the root, then on the picked group's runqueue; a delayed
// entity reaching the front is dequeued for good and the pick starts again from the root.
[[gnu::always_inline]] inline Task* Scheduler::pick_next_task_fair(int cpu) {
    Rq& rq = rq_of(cpu);
    for (;;) {
        SchedEntity* se = pick_eevdf(rq.cfs, true, rq);
        if (!se) return nullptr;
        if (se->my_q) {
            if (se->sched_delayed) {
                // dequeue_entity()'s update_load_avg() of the root and the entity first: nothing
                // in the pick has brought them to now.
                pelt_update_cpu(cpu);
                pelt_update_gse(cpu, se->my_q->group);
                dequeue_group_se(cpu, *se->my_q, false);
                continue;
            }
            se = pick_eevdf(*se->my_q, true, rq);
        }
        Task* t = static_cast<Task*>(se);
        if (t->sched_delayed) {
            dequeue(cpu, *t, true);  // a delayed sleeper reaching the front leaves now
            t->state = TaskState::sleeping;
            update_idle_state(cpu);
            continue;
        }
        return t;
    }
}

// __schedule(): put prev back (preempted) or leave it off the queue (blocked), pick the next
// entity (delayed sleepers reaching the front leave now), newidle balance when there is none,
// then the context switch or idle.
void Scheduler::schedule(int cpu) {
    Rq& rq = rq_of(cpu);
    Task* prev = rq.curr;
    if (prev && prev->state == TaskState::running) {
        update_curr(cpu);
        pelt_update_task(*prev, true, true);
        prev->state = TaskState::runnable;  // preempted: stays queued
    }
    const bool stopper = rq.active_balance_push >= 0;
    if (stopper) active_load_balance_cpu_stop(cpu);  // the stopper runs first
    // The root's entity of prev, still cfs_rq->curr there until this pick.
    // (A prev the active-balance stopper moved away left nothing here: every level is new.)
    const SchedEntity* prev_top = prev && prev->group >= 0 && prev->cpu == cpu ? cfs_of(*prev, cpu).se : nullptr;
    // pick_next_task_fair(): a newidle balance that pulled starts the pick again (goto again),
    // so a pick that then found only delayed sleepers (dequeued there) balances again.
    Task* next = pick_next_task_fair(cpu);
    while (!next && sched_balance_newidle(cpu)) next = pick_next_task_fair(cpu);
    rq.need_resched = false;  // clear_tsk_need_resched(prev) after pick_next_task()
    if (!next) {
        go_idle(cpu);
        return;
    }
    // set_next_entity() on each level that changes: clear_buddies(), and the group's entity
    // protected for its own slice (set_protect_slice()).
    if (next->group < 0) {
        if (rq.cfs.next == next) rq.cfs.next = nullptr;
    } else {
        CfsRq& ncfs = cfs_of(*next, cpu);
        clear_buddies(cpu, ncfs, *next);
        if (ncfs.se != prev_top) {
            clear_buddies(cpu, rq.cfs, *ncfs.se);
            set_protect_slice(*ncfs.se);
        }
    }
    pelt_update_cpu(cpu);
    cpufreq_update_util(cpu);  // set_next_entity()'s update_load_avg(): if decayed
    pelt_update_task(*next, false, true);
    next->state = TaskState::running;
    next->cfs_seq = ++cfs_seq_;  // pick_next_task_fair(): list_move to the head of cfs_tasks
    // __set_next_task_fair() for a task other than prev (put_prev_set_next_task()); after the
    // stopper, prev was the stopper.
    if (next != prev || stopper) update_misfit_status(next, cpu);
    if (next == prev) {
        next->exec_start = now();
        arch_->return_to_curr(cpu);
        return;
    }
    const char prev_state = !prev || prev->state == TaskState::runnable ? 'R'
                            : prev->state == TaskState::exited         ? 'X'
                                                                       : 'S';
    if (wants(kObsSwitch)) obs_->sched_switch(cpu, prev, prev_state, next);
    // set_next_entity(): exec_start is the clock __schedule() read, so the switch itself is the
    // next task's runtime (vruntime, sum_exec_runtime), as update_stats_curr_start() makes it.
    next->exec_start = now();
    arch_->context_switch(cpu, prev, *next);
    rq.curr = next;
    rq.switching = true;
    set_protect_slice(*next);
    update_idle_state(cpu);
}

// __schedule() with nothing to run: the idle task.
void Scheduler::go_idle(int cpu) {
    Rq& rq = rq_of(cpu);
    Task* prev = rq.curr;
    pelt_update_cpu(cpu);
    if (prev && wants(kObsSwitch)) obs_->sched_switch(cpu, prev, prev->state == TaskState::exited ? 'X' : 'S', nullptr);
    rq.curr = nullptr;
    rq.switching = false;
    rq.idle_stamp = now();
    update_idle_state(cpu);
    update_idle_core(cpu);
    // do_idle()'s nohz_run_idle_balance(): only when no kick's pass is on its way here (its
    // need_resched test holds: __schedule() cleared the flag).
    if (std::exchange(rq.nohz_newilb, false) && nohz_ilb_ != cpu)
        nohz_balance_pass(cpu, NOHZ_STATS_KICK);
    arch_->enter_idle(cpu, prev);
}

// schedule() after set_current_state(TASK_INTERRUPTIBLE): try_to_block_task() dequeues the
// task (or, with DELAY_DEQUEUE, leaves an ineligible one queued), then __schedule().
void Scheduler::schedule_blocked(int cpu) {
    Rq& rq = rq_of(cpu);
    Task* t = rq.curr;
    t->block_pending = false;
    update_curr(cpu);
    util_est_update(*t);  // dequeue_task_fair() calls it before dequeue_entities() updates the signals
    pelt_update_task(*t, true, true);
    pelt_update_cpu(cpu);
    policy_.on_block(*t, now());
    t->state = TaskState::sleeping;
    rq.uclamp_idle_max = t->uclamp_max;  // uclamp_rq_dec(): kept if it was the last one (uclamp_idle_value())
    CfsRq& cfs = cfs_of(*t, cpu);
    clear_buddies(cpu, cfs, *t);  // dequeue_entity()'s clear_buddies(), delayed or not
    if (cfg_.features.on(Feat::DELAY_DEQUEUE) && cfs.queue.size() > 1 && !entity_eligible(cfs, *t)) {
        // dequeue_entity() with DELAY_DEQUEUE: the ineligible sleeper stays on the queue.
        t->sched_delayed = true;
        ++rq.nr_delayed;  // dequeue_entities() returns before h_nr_idle: the delayed task still counts
        util_est_dequeue(rq, *t);  // dequeue_task_fair() took it out before the entity was delayed
        update_overload(cpu);
    } else {
        dequeue(cpu, *t, true);
    }
    schedule(cpu);
}

// do_task_dead(): the current task exits.
void Scheduler::do_task_dead(int cpu) {
    Task* t = rq_of(cpu).curr;
    update_curr(cpu);
    pelt_update_task(*t, true, true);
    t->state = TaskState::exited;
    rq_of(cpu).uclamp_idle_max = t->uclamp_max;
    dequeue(cpu, *t, true);
    schedule(cpu);
}

void Scheduler::check_invariants() const {
    std::vector<int> seen(tasks_.size(), 0);
    for (size_t c = 0; c < rqs_.size(); ++c) {
        const Rq& rq = rqs_[c];
        int delayed = 0, idle_policy = 0;
        double util_est = 0;
        std::vector<const Task*> queued;
        for_each_queued(rq, [&](const Task* t) { queued.push_back(t); });
        for (const Task* t : queued) {
            if (seen[static_cast<size_t>(t->id)]++) throw std::logic_error("task " + t->comm + " queued on two CPUs");
            if (t->cpu != static_cast<int>(c)) throw std::logic_error("task " + t->comm + " queued on cpu" + std::to_string(c) + " but task_cpu is " + std::to_string(t->cpu));
            if (!t->on_rq) throw std::logic_error("queued task " + t->comm + " not on_rq");
            delayed += t->sched_delayed ? 1 : 0;
            idle_policy += t->policy == SchedPolicy::idle ? 1 : 0;
            if (!t->sched_delayed) {
                util_est += t->util_est_queued;
            } else if (t->util_est_queued != 0) throw std::logic_error("delayed task " + t->comm + " still in util_est");
        }
        if (std::abs(util_est - rq.util_est) > 1e-6 * (1 + util_est))
            throw std::logic_error("util_est mismatch on cpu" + std::to_string(c));
        if (idle_policy != rq.nr_sched_idle) throw std::logic_error("h_nr_idle mismatch on cpu" + std::to_string(c));
        if (static_cast<int>(queued.size()) != rq.nr_running) throw std::logic_error("nr_running mismatch on cpu" + std::to_string(c));
        if (delayed != rq.nr_delayed) throw std::logic_error("nr_delayed mismatch on cpu" + std::to_string(c));
        // The hierarchy: each queued task on its runqueue, each group's entity in the root exactly
        // while its runqueue here has tasks (or, delayed, with none left), the load weights summed.
        auto check_cfs = [&](const CfsRq& q) {
            uint64_t w = 0;
            Int128 vw = 0;
            for (const SchedEntity* e : q.queue) {
                if (!e->on_rq) throw std::logic_error("an entity off the queue is on cpu" + std::to_string(c) + "'s runqueue");
                if (e->queued_on != &q) throw std::logic_error("an entity queued elsewhere than it says on cpu" + std::to_string(c));
                w += e->weight;
                vw += static_cast<Int128>(e->weight) * e->vruntime;
                if (e->my_q && q.se) throw std::logic_error("a group entity below the root on cpu" + std::to_string(c));
                if (!e->my_q && static_cast<const Task*>(e)->group != q.group)
                    throw std::logic_error("task " + static_cast<const Task*>(e)->comm + " on another group's runqueue");
            }
            if (w != q.load_weight) throw std::logic_error("load weight mismatch on cpu" + std::to_string(c));
            if (static_cast<int64_t>(w) != q.w_sum || vw != q.vw_sum)
                throw std::logic_error("the runqueue's vruntime sums disagree with its entities on cpu" + std::to_string(c));
        };
        check_cfs(rq.cfs);
        size_t group_tasks = 0;
        for (const TaskGroupState& tg : groups_) {
            const GroupCpu& gc = tg.cpu[c];
            check_cfs(gc.q);
            group_tasks += gc.q.queue.size();
            const bool in_root = std::find(rq.cfs.queue.begin(), rq.cfs.queue.end(), &gc.se) != rq.cfs.queue.end();
            if (in_root != gc.se.on_rq) throw std::logic_error("a group entity's on_rq disagrees with the root on cpu" + std::to_string(c));
            if (gc.se.on_rq && gc.q.queue.empty() != gc.se.sched_delayed)
                throw std::logic_error("a group entity queued " + std::string(gc.se.sched_delayed ? "delayed with tasks" : "with no tasks") + " on cpu" + std::to_string(c));
            if (!gc.se.on_rq && !gc.q.queue.empty()) throw std::logic_error("a group with tasks but no entity on cpu" + std::to_string(c));
        }
        size_t root_tasks = 0;
        for (const SchedEntity* e : rq.cfs.queue) root_tasks += e->my_q ? 0 : 1;
        if (root_tasks + group_tasks != queued.size()) throw std::logic_error("a group's tasks outside its entity on cpu" + std::to_string(c));
        if (rq.curr) {
            if (rq.curr->state != TaskState::running) throw std::logic_error("curr " + rq.curr->comm + " not running");
            if (rq.curr->cpu != static_cast<int>(c)) throw std::logic_error("curr on the wrong CPU");
        }
        for (const Task* t : rq.wake_list)
            if (seen[static_cast<size_t>(t->id)]++) throw std::logic_error("task on a wake list twice or also queued");
    }
    for (const Task& t : tasks_) {
        if (t.state == TaskState::running || t.state == TaskState::runnable) {
            if (!t.on_rq) throw std::logic_error("runnable task " + t.comm + " not queued");
            if (t.state == TaskState::running && rqs_[static_cast<size_t>(t.cpu)].curr != &t)
                throw std::logic_error("task " + t.comm + " running but not curr");
        }
    }
    // tg->load_avg is the sum of its runqueues' published parts.
    for (const TaskGroupState& tg : groups_) {
        double parts = 0;
        for (const GroupCpu& gc : tg.cpu) parts += gc.tg_contrib;
        if (std::abs(parts - tg.load_avg) > 1e-6 * (1 + parts))
            throw std::logic_error("a group's load_avg disagrees with its runqueues' parts");
    }
}

}  // namespace wakesim
