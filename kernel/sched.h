// The scheduler's state, like kernel/sched/sched.h: per-CPU runqueues (struct rq with its CFS
// part), the LLC's shared state (struct sched_domain_shared), per-domain balance state, and the
// Scheduler class whose functions are split over files named after the kernel's:
//   kernel/core.cpp         kernel/sched/core.c: try_to_wake_up and its parts, wake_up_new_task,
//                           __schedule, sched_tick, resched_curr
//   kernel/fair.cpp         kernel/sched/fair.c: the EEVDF entity and runqueue
//   kernel/fair_wake.cpp    kernel/sched/fair.c: the wake path, record_wakee .. select_task_rq_fair
//   kernel/fair_balance.cpp kernel/sched/fair.c: load balancing
//   kernel/pelt.{h,cpp}     kernel/sched/pelt.{h,c} and fair.c's readers of the PELT signals
// The machine under the scheduler (how long switches and IPIs take, what tasks do) is behind
// SchedArch (kernel/arch.h); what the scheduler decides is reported to a SchedObserver
// (kernel/observer.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/rng.h"
#include "hw/hardware.h"
#include "hw/machine_profile.h"
#include "kernel/arch.h"
#include "kernel/energy.h"
#include "kernel/features.h"
#include "kernel/observer.h"
#include "kernel/task.h"
#include "kernel/wake_flags.h"
#include "kernel/wake_policy.h"
#include "topology/sched_domains.h"
#include "topology/topology.h"

namespace wakesim {

struct SgStats;

struct TaskSpec {
    std::string comm;
    CpuSet allowed;  // empty = all CPUs
    int nice = 0;
    SchedPolicy policy = SchedPolicy::normal;
    TaskRole role = TaskRole::other;
    uint32_t pair_id = 0;
    bool per_cpu_kthread = false;
    int64_t footprint_kib = 0;  // working set refilled after running elsewhere
    // wake_wide()'s count as the creating thread left it: dup_task_struct() copies wakee_flips
    // to the child and sched_fork() does not reset it.
    uint32_t wakee_flips = 0;
    // The thread existed and slept long before the run (a server started before its client): it
    // starts with its PELT signals decayed to nothing, not a new task's (post_init_entity_util_avg()).
    bool long_idle = false;
    // Effective clamps, 0..1024 (the group's already applied; Task::uclamp_min/max).
    int uclamp_min = 0;
    int uclamp_max = 1024;
    // Fair group scheduling: the task group it runs in (an autogroup, or a cgroup with the cpu
    // controller), numbered by the caller from 0; -1: the root. Every task of a group gives the
    // same shares (tg->shares: 1024 for cpu.weight 100 or an autogroup at nice 0).
    int fair_group = -1;
    uint32_t group_shares = 1024;
};

// The runqueue's clamps (uclamp_rq_get(rq, UCLAMP_MIN/MAX)) and uclamp_rq_is_idle().
struct RqClamp {
    int min = 0;
    int max = 1024;
    bool idle = true;
};

struct SchedConfig {
    SchedFeatures features;
    int64_t migration_cost_ns = 500000;  // sysctl_sched_migration_cost
    int64_t base_slice_ns = 700000;      // sysctl_sched_base_slice before ilog2 scaling
    bool start_sis_scan_full = true;     // nr_idle_scan starts at llc weight (no boot transient)
    // v6.19-rc1..rc6: a wakeup in task context reschedules a running entity that is no longer
    // eligible, protection or not ("sched/fair: Reimplement NEXT_BUDDY to align with EEVDF
    // goals"; reverted by "sched/fair: Revert force wakeup preemption" in v6.19-rc7).
    bool force_wakeup_preemption = false;
};

class Scheduler final {
public:
    Scheduler(Engine& engine, const Topology& topo, const SchedDomains& sd, const MachineProfile& prof,
              PolicyRun& policy, SchedConfig cfg, Hardware& hw, uint64_t seed);
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    void set_arch(SchedArch* a) { arch_ = a; }
    // nullptr: nobody listens.
    void set_observer(SchedObserver* o);
    // Send the detail events (SelectFairEv, PinnedEv, ...) for the n-th (1-based) select_task_rq
    // call; 0: for none.
    void set_explain(uint64_t nth_select) { explain_nth_ = nth_select; }

    // ----- core.c -----
    // sched_fork() + __sched_setscheduler(): a new task, not yet runnable.
    int add_task(const TaskSpec& spec);
    // wake_up_new_task(): fork placement from parent_cpu through the slow path; not a migration.
    void wake_up_new_task(int task, int parent_cpu);
    // try_to_wake_up(wakee) with the flags the policy gives the wake site, from `waker` running on
    // this_cpu (waker nullptr: interrupt or timer context). Returns true if the task was woken.
    bool wake(int wakee, const WakeSite& site, Task* waker, int this_cpu);
    // sched_ttwu_pending(): the CPU enqueues the tasks on its wake list (IPI handler).
    void sched_ttwu_pending(int cpu);
    // __schedule(): pick the next task on `cpu` and switch to it (or to idle).
    void schedule(int cpu);
    // The current task set itself to sleep and calls schedule(): try_to_block_task(), __schedule().
    void schedule_blocked(int cpu);
    // do_task_dead(): the current task exits.
    void do_task_dead(int cpu);
    // finish_task_switch(): the machine finished switching to rq->curr, which now runs (its
    // runtime counts from the pick: schedule() set exec_start).
    void finish_task_switch(int cpu) {
        Rq& rq = rq_of(cpu);
        Task* t = rq.curr;
        rq.switching = false;
        if (wants(kObsSwitchedIn)) obs_->switched_in(cpu, *t);
        policy_.on_run(*t, now());
    }
    // sched_tick(): the periodic tick on a busy CPU.
    void sched_tick(int cpu);
    // sched_tick() on an idle CPU that kept its tick (rq->idle_balance): its own balance, if due.
    void sched_tick_idle(int cpu);
    // nohz_balance_enter_idle(): the idle CPU stopped its tick; it joins nohz.idle_cpus_mask and
    // leaves it at its next busy tick (nohz_balance_exit_idle()), not when it wakes.
    void nohz_balance_enter_idle(int cpu);
    // At the start: an idle CPU whose governor keeps the tick is not in nohz.idle_cpus_mask.
    void nohz_tick_kept(int cpu) { nohz_idle_.clear(cpu); }
    const CpuSet& nohz_idle_mask() const { return nohz_idle_; }
    // resched_curr(): the CPU's current task should give way.
    void resched_curr(int cpu);
    bool need_resched(int cpu) const { return rqs_[static_cast<size_t>(cpu)].need_resched; }
    // The flag itself, as the arch's entry code reads TIF_NEED_RESCHED; valid for the scheduler's life.
    const bool& need_resched_flag(int cpu) const { return rqs_[static_cast<size_t>(cpu)].need_resched; }

    // ----- fair.c: EEVDF -----
    // update_curr(): account the current task's runtime and ask for a reschedule when its slice
    // or protection is used up; called only where fair.c calls it.
    void update_curr(int cpu);

    // Queries used by the wake path and by policies.
    const Topology& topo() const { return topo_; }
    const SchedDomains& domains() const { return sd_; }
    const MachineProfile& profile() const { return prof_; }
    const SchedConfig& config() const { return cfg_; }
    const PolicyRun& policy() const { return policy_; }
    Time now() const { return engine_.now(); }
    Time tick_ns() const { return tick_ns_; }
    int nr_running(int cpu) const { return rqs_[static_cast<size_t>(cpu)].nr_running; }
    int nr_delayed(int cpu) const { return rqs_[static_cast<size_t>(cpu)].nr_delayed; }
    bool available_idle_cpu(int cpu) const { return idle_mask_.test(cpu); }
    bool sched_idle_cpu(int cpu) const { return sched_idle_mask_.test(cpu); }
    bool usable(int cpu) const { return idle_mask_.test(cpu) || sched_idle_mask_.test(cpu); }
    const CpuSet& idle_mask() const { return idle_mask_; }
    const CpuSet& sched_idle_mask() const { return sched_idle_mask_; }
    // cpu_util_cfs(): max(util_avg, util_est), 0..capacity.
    double cpu_util(int cpu) const {
        double u = rq_of(cpu).pelt.util_avg;
        if (cfg_.features.on(Feat::UTIL_EST)) u = std::max(u, rq_of(cpu).util_est);
        return std::min<double>(u, capacity_of(cpu));
    }
    double cpu_util_cfs_boost(int cpu) const;  // schedutil's input: max(util_avg, runnable_avg, util_est)
    double cpu_load(int cpu) const { return rq_of(cpu).pelt.load_avg; }  // PELT load_avg of the CPU
    double task_util(const Task& t) const;  // max(util_avg, util_est)
    // A waking task's signals synced to its runqueue's last update (sync_entity_load_avg()).
    Pelt wakee_pelt_synced(const Task& p) const;
    const Pelt& cfs_rq_avg(const Task& p) const;  // its runqueue's signals: the root's or its group's
    double wakee_util(const Task& p) const;  // task_util_est() after that sync
    double task_util_est(const Task& t, double util_avg) const;  // max(util_avg, util_est) with UTIL_EST
    Pelt task_pelt_now(const Task& t) const;
    double task_load(const Task& t) const;
    int capacity_of(int cpu) const { return topo_.cpu(cpu).capacity; }
    bool task_fits_cpu(const Task& t, int cpu) const;
    // update_misfit_status(): t, running on an asymmetric-capacity machine, could go to a bigger
    // CPU its affinity allows and does not fit this one.
    bool task_misfit(const Task& t, int cpu) const {
        return t.nr_cpus_allowed > 1 && capacity_of(cpu) != t.max_allowed_capacity && !task_fits_cpu(t, cpu);
    }
    // update_misfit_status(): rq->misfit_task_load set for the task just picked or ticked (p), 0
    // for none; the balancer reads it as set.
    void update_misfit_status(const Task* p, int cpu) {
        if (!sd_.asym_active()) return;
        rq_of(cpu).misfit_task_load = p && task_misfit(*p, cpu) ? std::max(task_load(*p), 1.0) : 0.0;
    }
    // util_fits_cpu(): 1 fits, 0 does not, -1 fits but uclamp_min asks more than the CPU has.
    int util_fits_cpu(double util, int uclamp_min, int uclamp_max, int cpu) const;
    // uclamp_is_used(): some task has a clamp (the static key sched_uclamp_used).
    bool uclamp_is_used() const { return uclamp_used_; }
    // The max aggregation of the clamps of the CPU's runnable tasks (the rq's UCLAMP_MIN/MAX
    // buckets, reduced to the maximum over its runnable, not delayed tasks). An idle runqueue:
    // min 0 and the max of the last task that slept or exited there (uclamp_idle_value()).
    RqClamp uclamp_rq(int cpu) const;
    const Task& task(int id) const { return tasks_[static_cast<size_t>(id)]; }
    Task& task_mut(int id) { return tasks_[static_cast<size_t>(id)]; }
    int nr_tasks() const { return static_cast<int>(tasks_.size()); }
    const Task* current(int cpu) const { return rqs_[static_cast<size_t>(cpu)].curr; }
    bool has_idle_cores(int cpu) const;
    // cpus_share_resources(): the same sd_share_id (cluster, else LLC).
    bool shares_resources(int a, int b) const { return sd_.of(a).sd_share_id == sd_.of(b).sd_share_id; }
    int nr_idle_scan(int cpu) const;
    uint64_t select_calls() const { return select_calls_; }
    // Test and scenario hooks.
    void set_nr_idle_scan(int cpu, int v);
    void set_has_idle_cores(int cpu, bool v);

    // ----- fair.c: the wake path, building blocks a policy can call -----
    // vcpu_pack_room() of the out-of-tree sched_vcpu_pack patch (machine parameter vcpu_pack):
    // `cpu` can take p without another vCPU being woken.
    bool vcpu_pack_room(const Task& p, int cpu) const;
    void record_wakee(Task& waker, const Task& p);
    bool wake_wide(const Task& p, const Task* waker, int this_cpu) const;
    // wake_affine_idle(): this_cpu or prev, or -1 for no decision; `why` gets the branch.
    int wake_affine_idle(int this_cpu, int prev, bool sync, AffineIdle* why = nullptr) const;
    // wake_affine_weight(): this_cpu, or -1 (prev); `ev` gets the numbers and the branch.
    int wake_affine_weight(int sd_level, const Task& p, const Task* waker, int this_cpu, int prev, bool sync,
                           WakeAffineEv* ev = nullptr) const;
    // wake_affine(): this_cpu or prev. sd_level indexes this_cpu's domains.
    int wake_affine(int sd_level, const Task& p, const Task* waker, int this_cpu, int prev, bool sync);
    // sched_balance_find_dst_cpu(): fork/exec placement from `cpu`'s domains with sd_flag.
    int sched_balance_find_dst_cpu(const Task& p, int cpu, int prev, uint32_t sd_flag);
    // sched_balance_find_dst_group(): the index of D's group to move a forked task to, -1 to stay.
    int sched_balance_find_dst_group(const Task& p, const SchedDomain& D) const;
    // One CPU's part of a group's statistics, as update_sg_lb_stats() and update_sg_wakeup_stats()
    // both add it: load, utilisation, runnable, task counts, idleness, capacity.
    void sg_account_cpu(SgStats& s, int cpu) const;
    // select_idle_core(): whether core_cpu's core is fully idle. Counts the threads looked at in
    // `probes`, remembers the first idle (or SCHED_IDLE) thread in `cpus` as idle_cpu, and takes
    // the core's threads out of `remaining` when it is not idle.
    int select_idle_core(int core_cpu, const CpuSet& cpus, CpuSet& remaining, int& idle_cpu, int& probes) const;
    // select_idle_cpu(): scan sd_cpu's LLC from target+1 (idle cores when has_idle_core).
    int select_idle_cpu(const Task& p, int sd_cpu, bool has_idle_core, int target, int& probes);
    // select_idle_capacity(): an idle CPU that fits p (of utilisation `util`) in the
    // asymmetric-capacity domain.
    int select_idle_capacity(const Task& p, int target, double util) const;
    int select_idle_sibling(Task& p, const Task* waker, int this_cpu, int prev, int target);
    int select_task_rq_fair(Task& p, int prev, uint32_t wake_flags, const Task* waker, int this_cpu);

    // ----- fair.c: energy-aware scheduling (kernel/energy.cpp) -----
    // sched_energy_enabled(): an energy model for every CPU, asymmetric capacities, no SMT, schedutil.
    bool sched_energy_enabled() const { return eas_; }
    const std::vector<EmPerfDomain>& perf_domains() const { return pds_; }
    bool cpu_overutilized(int cpu) const;
    // rd->overutilized: -1 when clear, else the CPU whose utilisation set it (it may fit again:
    // the flag is cleared only by a root-level load balance).
    int rd_overutilized_cpu() const { return rd_overutilized_ ? rd_overutilized_by_ : -1; }
    double misfit_task_load(int cpu) const { return rq_of(cpu).misfit_task_load; }  // rq->misfit_task_load
    bool rd_overloaded() const { return rd_overloaded_; }  // get_rd_overloaded()
    // check_update_overutilized_status(): at an enqueue and a busy tick.
    void check_update_overutilized_status(int cpu);
    // Reads every CPU's utilisation for the EAS decision that follows; rd_overutilized_cpu().
    int eas_snapshot();
    // find_energy_efficient_cpu() on eas_snapshot()'s utilisation: a CPU, or -1 (no asymmetric
    // domain spans prev); `ev` gets why.
    int find_energy_efficient_cpu(const Task& p, int prev, int this_cpu, FeecEv* ev = nullptr);

    // Invariant checks for tests: throws std::logic_error describing the first violation.
    void check_invariants() const;
    // Busy (non-idle) time per CPU so far, including the current busy stretch (from the machine).
    Time cpu_busy_ns(int cpu) const { return arch_->cpu_busy_ns(cpu); }
    Hardware& hardware() { return hw_; }
    const Hardware& hardware() const { return hw_; }

private:
    // select_task_rq_fair()'s packing step of the sched_vcpu_pack patch: a CPU, or -1 for mainline.
    int vcpu_pack_select(const Task& p, const Task* waker, int this_cpu, int prev, bool sync) const;
    struct DomainState {
        Time last_balance = 0;
        int64_t balance_interval_ms = 1;
        int nr_balance_failed = 0;
        int64_t max_newidle_lb_cost = 0;
        Time last_decay_max_lb_cost = 0;
        // sd_init()'s NI_RANDOM statistics: half the calls succeeded.
        int newidle_call = 512, newidle_success = 256, newidle_ratio = 512;
        // update_newidle_stats(): the success ratio (of 1024) over about the last 1024 calls.
        void update_newidle_stats(int success) {
            ++newidle_call;
            newidle_success += success;
            if (newidle_call >= 1024) {
                newidle_ratio = newidle_success;
                newidle_call /= 2;
                newidle_success /= 2;
            }
        }
    };
    // enum cpu_idle_type.
    enum class CpuIdle : uint8_t { not_idle, idle, newly_idle };
    // enum migration_type.
    enum class MigrationType : uint8_t { load, util, task, misfit };
    // struct lb_env: the part of a balance pass detach_tasks() reads and updates.
    struct LbEnv {
        int level = 0, dst = 0, src = -1;
        CpuIdle idle = CpuIdle::not_idle;
        MigrationType type = MigrationType::load;
        double imbalance = 0;
        int loop = 0, loop_max = 0, loop_break = 0;
        bool all_pinned = false, need_break = false, active_lb = false;
        CpuSet cpus;  // env->cpus: the span minus runqueues found all pinned
    };
    // struct rq with its cfs_rq.
    struct Rq {
        CfsRq cfs;  // the root's EEVDF queue: its tasks and the groups' entities (curr and delayed included)
        Task* curr = nullptr;      // nullptr: the idle task
        bool switching = false;    // the machine is still switching to curr (it has not run yet)
        int nr_running = 0;
        int nr_delayed = 0;
        int nr_sched_idle = 0;  // cfs.h_nr_idle: queued SCHED_IDLE tasks, delayed ones included
        bool ttwu_pending = false;
        bool overloaded = false;  // two or more tasks queued, delayed ones too (feeds rd->overloaded)
        double misfit_task_load = 0;  // rq->misfit_task_load: set at the pick and the tick, cleared at newidle
        std::vector<Task*> wake_list;
        bool need_resched = false;
        bool nohz_newilb = false;  // NOHZ_NEWILB_KICK in nohz_flags(cpu): update idle CPUs' blocked load at idle entry
        bool has_blocked_load = false;  // rq->has_blocked_load: signals left that may not have decayed to zero
        int64_t last_blocked_load_update_tick = -1;  // rq->last_blocked_load_update_tick, in jiffies
        Time idle_stamp = 0;  // 0: not idle
        int64_t avg_idle = 0;
        int64_t max_idle_balance_cost = 0;
        Pelt pelt;  // util_avg/load_avg/runnable_avg of the CPU (blocked contributions included)
        // cfs_rq->removed of the groups' runqueues here: what grouped tasks that migrated away
        // still contribute, until update_blocked_averages() or the group's next update here.
        std::vector<PeltRemoved> removed;
        double util_est = 0;  // cfs_rq->avg.util_est: the util_est of the runnable tasks
        // update_load_avg()'s `decayed` (a period ended, a contribution attached or removed) since
        // schedutil last looked: the next update point calls cpufreq_update_util().
        bool util_decayed = false;
        // The root's cfs_rq->h_load and last_h_load_update (jiffies): task_h_load()'s cache.
        mutable double h_load = 0;
        mutable int64_t h_load_jiffy = -1;
        Time next_balance = 0;
        std::vector<DomainState> dom;
        int active_balance_push = -1;  // rq->active_balance with push_cpu: the stopper is queued
        int uclamp_idle_max = 1024;    // UCLAMP_FLAG_IDLE: the max clamp kept while idle
    };
    // util_est_enqueue()/util_est_dequeue(): the runqueue's util_est sums its runnable tasks'.
    static void util_est_enqueue(Rq& rq, Task& t) {
        t.util_est_queued = t.pelt.util_est;
        rq.util_est += t.util_est_queued;
    }
    // util_est_update() at a sleep, v6.19: nothing while util_avg has not been recomputed since the
    // last update; up at once to util_avg; down by a quarter of the gap, unless the gap is under
    // UTIL_EST_MARGIN (1%), util_avg exceeds the CPU's capacity or the task waited for the CPU
    // (runnable_avg above util_avg + 1%).
    void util_est_update(Task& t) const {
        if (!cfg_.features.on(Feat::UTIL_EST) || t.pelt.util_avg_unchanged) return;
        constexpr int64_t kMargin = 1024 / 100;  // UTIL_EST_MARGIN
        auto ewma = static_cast<int64_t>(t.pelt.util_est);
        const auto dequeued = static_cast<int64_t>(t.pelt.util_avg);
        if (ewma <= dequeued) {
            ewma = dequeued;
        } else if (const int64_t diff = ewma - dequeued; diff >= kMargin) {
            if (dequeued > capacity_of(t.cpu)) return;  // no idle time seen: left as it is, flag too
            if (dequeued + kMargin >= static_cast<int64_t>(t.pelt.runnable_avg))
                ewma = ((ewma << 2) - diff) >> 2;  // UTIL_EST_WEIGHT_SHIFT
        }
        t.pelt.util_est = static_cast<double>(ewma);
        t.pelt.util_avg_unchanged = true;
    }
    static void util_est_dequeue(Rq& rq, Task& t) {
        rq.util_est = std::max(0.0, rq.util_est - t.util_est_queued);
        t.util_est_queued = 0;
    }
    // struct sched_domain_shared of an LLC.
    struct LlcShared {
        bool has_idle_cores = false;
        int nr_idle_scan = 0;
    };

    Rq& rq_of(int cpu) { return rqs_[static_cast<size_t>(cpu)]; }
    const Rq& rq_of(int cpu) const { return rqs_[static_cast<size_t>(cpu)]; }

    // core.c
    void set_task_cpu(Task& p, int cpu, MigrationCause cause);
    int select_task_rq(Task& p, int cpu_hint, uint32_t& flags, const Task* waker, int this_cpu);
    void ttwu_do_activate(int cpu, Task& p, uint32_t flags);
    void ttwu_runnable(Task& p, uint32_t flags, Task* waker, int this_cpu);
    bool ttwu_queue_cond(const Task& p, int cpu, int this_cpu) const;
    WokenVia ttwu_queue(Task& p, int cpu, uint32_t flags, Task* waker, int this_cpu);
    bool try_to_wake_up(Task& p, uint32_t flags, Task* waker, int this_cpu);
    void go_idle(int cpu);
    // sched.h add_nr_running(): a runqueue reaching two tasks queued (rq->nr_running: delayed
    // sleepers count) sets rd->overloaded; only a root-level load balance clears it
    // (update_sd_lb_stats()).
    void update_overload(int cpu) {
        Rq& rq = rq_of(cpu);
        const bool over = rq.nr_running >= 2;
        if (over && !rq.overloaded) rd_overloaded_ = true;
        rq.overloaded = over;
    }
    // idle_cpu() and sched_idle_cpu() as masks, refreshed whenever a runqueue changes.
    void update_idle_state(int cpu) {
        update_overload(cpu);
        const Rq& rq = rq_of(cpu);
        idle_mask_.assign(cpu, rq.curr == nullptr && rq.nr_running == 0 && !rq.ttwu_pending);
        sched_idle_mask_.assign(cpu, rq.nr_running > 0 && rq.nr_sched_idle == rq.nr_running);
    }
    bool wants(uint32_t interest) const { return (obs_mask_ & interest) != 0; }
    // The outcome of the select_task_rq call in progress, for its summary and its step event.
    void select_outcome(SelectOutcome o, int cpu, SisFallback fb = SisFallback::none) {
        sel_.outcome = o;
        if (steps_) obs_->select_outcome({o, cpu, fb});
    }

    // fair.c: EEVDF, on one runqueue (the root or a group's)
    int64_t avg_vruntime(const CfsRq& cfs) const;
    bool entity_eligible(const CfsRq& cfs, const SchedEntity& se) const;
    // pick_eevdf() on `cfs`, a runqueue of `rq` (whose running task gives the level's curr).
    SchedEntity* pick_eevdf(CfsRq& cfs, bool protect, const Rq& rq);
    void place_entity(CfsRq& cfs, SchedEntity& se, bool initial);
    // set_protect_slice(): protected up to the deadline, or for the shortest queued slice
    // (RUN_TO_PARITY), else for one normalised base slice at least.
    void set_protect_slice(SchedEntity& next) {
        const int64_t quantum =
            std::min(cfg_.features.on(Feat::RUN_TO_PARITY) ? slice_ns_ : cfg_.base_slice_ns, next.slice);
        next.vprot = quantum == next.slice ? next.deadline
                                           : std::min(next.deadline, next.vruntime + calc_delta_fair(quantum, next));
    }
    // clear_buddies(): `se` is no longer `cfs`'s next buddy, nor is its group above it when the
    // buddy was set through it (set_next_buddy() marks every level).
    void clear_buddies(int cpu, CfsRq& cfs, const SchedEntity& se) {
        if (cfs.next != &se) return;
        cfs.next = nullptr;
        if (cfs.se && rq_of(cpu).cfs.next == cfs.se) rq_of(cpu).cfs.next = nullptr;
    }
    // update_deadline() of the running entity on its level, and whether that level wants a new
    // pick: the slice or the protection used up, with another entity queued.
    bool update_deadline(SchedEntity& e, const CfsRq& q) const {
        bool expired = false;
        if (e.vruntime >= e.deadline) {
            e.deadline = e.vruntime + calc_delta_fair(e.slice, e);
            expired = true;
        }
        return q.queue.size() > 1 && (expired || e.vruntime >= e.vprot);
    }
    void enqueue(int cpu, Task& t, bool initial, bool delayed = false);  // delayed: a migrating delayed sleeper
    // Removes from the queue entirely; `sleep`: the task sleeps or exits (DEQUEUE_SLEEP).
    void dequeue(int cpu, Task& t, bool sleep = false);
    bool check_preempt_wakeup_fair(int cpu, Task& p, uint32_t flags);
    void requeue_delayed_entity(CfsRq& cfs, SchedEntity& se);
    void update_curr_around(int cpu, const Task& t);
    int64_t entity_lag(const CfsRq& cfs, const SchedEntity& se) const;
    static void queue_erase(CfsRq& cfs, SchedEntity& se);
    // __enqueue_entity(): into the queue and its sums.
    static void queue_add(CfsRq& cfs, SchedEntity& se) {
        cfs.queue.push_back(&se);
        se.queued_on = &cfs;
        cfs.vw_sum += static_cast<Int128>(se.weight) * se.vruntime;
        cfs.w_sum += se.weight;
    }
    // An entity runs `dv` of virtual time (update_curr()); the sums of its queue follow.
    static void advance_vruntime(SchedEntity& se, int64_t dv) {
        se.vruntime += dv;
        if (se.queued_on) se.queued_on->vw_sum += static_cast<Int128>(se.weight) * dv;
    }
    int64_t calc_delta_fair(int64_t delta, const SchedEntity& se) const { return delta * 1024 / se.weight; }
    // Every task queued on the CPU (the root's and its groups', delayed ones included), in no
    // particular order.
    template <class F>
    static void for_each_queued(const Rq& rq, F&& f) {
        for (SchedEntity* e : rq.cfs.queue) {
            if (!e->my_q)
                f(static_cast<Task*>(e));
            else
                for (SchedEntity* t : e->my_q->queue) f(static_cast<Task*>(t));
        }
    }
    // The runqueue a task's entity is queued on, on `cpu`: the root's or its group's there.
    CfsRq& cfs_of(const Task& t, int cpu) {
        return t.group < 0 ? rq_of(cpu).cfs : groups_[static_cast<size_t>(t.group)].cpu[static_cast<size_t>(cpu)].q;
    }
    const CfsRq& cfs_of(const Task& t, int cpu) const {
        return t.group < 0 ? rq_of(cpu).cfs : groups_[static_cast<size_t>(t.group)].cpu[static_cast<size_t>(cpu)].q;
    }
    // The entity of the CPU's running task on `cfs` (cfs_rq->curr on the path to rq->curr), nullptr:
    // none (idle, the task elsewhere in the hierarchy, or the task off the queue).
    SchedEntity* curr_on(const Rq& rq, const CfsRq& cfs) const;
    // The pick of __schedule(): down the hierarchy from the root; delayed entities reaching the
    // front leave on the way (pick_next_entity()'s DEQUEUE_DELAYED).
    Task* pick_next_task_fair(int cpu);
    // enqueue_entity()/dequeue_entity() of a group's entity in the root, and update_cfs_group().
    void enqueue_group_se(int cpu, CfsRq& gq);
    void dequeue_group_se(int cpu, CfsRq& gq, bool sleep);
    void update_cfs_group(int cpu, CfsRq& gq);

    // fair.c: wake path
    void update_idle_core(int cpu);

    // topology.c build_perf_domains() and fair.c's EAS helpers (kernel/energy.cpp)
    void build_perf_domains();
    double eas_cpu_util(int cpu, const Task& p, int dst_cpu, double p_util_avg, bool boost = false) const;
    double compute_energy(const EmPerfDomain& pd, const Task& p, int dst_cpu, double p_util_avg, double p_util,
                          double pd_busy) const;
    // eas_snapshot()'s signals by CPU.
    struct EasCpu {
        double util = 0;      // cfs_rq->avg.util_avg, as last updated
        double runnable = 0;  // cfs_rq->avg.runnable_avg, as last updated
        double util_est = 0;  // cfs_rq->avg.util_est
    };

    // pelt.c (the task's update inline, in kernel/pelt.h)
    void pelt_update_task(Task& t, bool running, bool runnable);
    void pelt_update_cpu(int cpu);
    // cfs_rq_util_change(): schedutil re-evaluates the CPU's policy only when its signals decayed.
    void cpufreq_update_util(int cpu);
    // migrate_task_rq_fair(): the task's signals leave from_cpu's and join to_cpu's.
    void pelt_sync_leaving(Task& p);  // a waking task's signals before it migrates
    void pelt_migrate(Task& p, int from_cpu, int to_cpu, bool wakeup);  // wakeup: remove_entity_load_avg(), else detach
    void pelt_attach(Task& p, int cpu);
    void post_init_entity_util_avg(Task& p, int cpu);
    // update_cfs_rq_load_avg()'s first step for `group`'s runqueue on `cpu`: the contributions
    // its migrated tasks left come off the group's signal and the CPU's; true if there were any.
    bool pelt_apply_removed(int cpu, int group);
    void update_blocked_averages(int cpu);
    bool update_nohz_stats(int cpu);
    int64_t jiffies() const { return engine_.now() / tick_ns_; }
    // The balancer keeps its times in jiffies (sd->last_balance = jiffies): the start of this
    // jiffy, and get_sd_balance_interval() in whole jiffies, both as ns.
    Time jiffy_start() const { return jiffies() * tick_ns_; }
    Time sd_balance_interval(int64_t interval_ms, int busy_factor, bool busy) const;
    // update_load_avg(UPDATE_TG) of `group`'s runqueue on `cpu`: its load brought to now, the
    // removed contributions off, then update_tg_load_avg().
    void pelt_update_group(int cpu, int group);
    bool pelt_sync_group(int cpu, int group);
    // update_load_avg(root, se) of `group`'s entity on `cpu`: its own signals to now, then what its
    // runqueue propagates (update_tg_cfs_load()).
    void pelt_update_gse(int cpu, int group);
    // reweight_entity()'s part in the signals: the entity's load at weight `w`, the root's with it.
    void reweight_gse_load(int cpu, int group, uint32_t w);
    void update_tg_load_avg(int cpu, int group);

    // fair.c: load balancing (sched_balance_*)
    bool task_hot(const Task& t, const LbEnv& env) const;
    bool can_migrate_task(const Task& t, LbEnv& env) const;
    void move_task(Task& t, int src, int dst, MigrationCause cause);
    int detach_tasks(LbEnv& env);
    // cpu_runnable(): the runqueue's runnable_avg (1024 per runnable task whatever its weight).
    double cpu_runnable(int cpu) const { return rq_of(cpu).pelt.runnable_avg; }
    void update_idle_cpu_scan(int cpu, int level);
    bool should_we_balance(int cpu, int level, CpuIdle idle) const;
    int sched_balance_find_src_group(LbEnv& env);
    int sched_balance_find_src_rq(const LbEnv& env, int group) const;
    bool need_active_balance(const LbEnv& env) const;
    // sched_balance_rq(): the number of tasks moved; clears continue_balancing when another
    // CPU of the local group balances this level (should_we_balance()).
    int sched_balance_rq(int cpu, int level, CpuIdle idle, bool& continue_balancing);
    bool update_newidle_cost(DomainState& ds, int64_t cost, int success);
    void sched_balance_domains(int cpu, bool idle);  // the caller brings the blocked averages up to date
    void nohz_balancer_kick(int busy_cpu);
    // nohz_idle_balance() on the kicked CPU, when its IPI arrives.
    void nohz_idle_balance(int ilb);
    // _nohz_idle_balance(): the pass over nohz.idle_cpus_mask that `ilb` runs with `flags`.
    void nohz_balance_pass(int ilb, uint8_t flags);
    bool sched_balance_newidle(int cpu);
    void nohz_newidle_balance(int cpu);
    // active_load_balance_cpu_stop(): the stopper queued on `cpu` by an active balance moves one
    // task (the preempted one included) to push_cpu. __schedule() runs it before its pick.
    void active_load_balance_cpu_stop(int cpu);

    Engine& engine_;
    const Topology& topo_;
    const SchedDomains& sd_;
    const MachineProfile& prof_;
    PolicyRun& policy_;
    SchedConfig cfg_;
    Hardware& hw_;
    SchedArch* arch_ = nullptr;
    // The CPU whose kernel code runs now (smp_processor_id()), -1 outside any.
    int this_cpu() const { return arch_ ? arch_->this_cpu() : -1; }
    SchedObserver* obs_;
    uint32_t obs_mask_ = 0;  // obs_->interests()
    RngStream rng_balance_;
    uint64_t explain_nth_ = 0;
    bool explain_ = false;  // the select_task_rq call in progress is the explained one
    bool steps_ = false;    // ... and its step events are wanted
    SelectResultEv sel_;    // the summary of the select_task_rq call in progress
    TtwuWork ttwu_work_;    // the work of the try_to_wake_up in progress
    bool wake_in_task_ = false;  // the wakeup in progress runs in task context (in_task()), not an IPI or timer
    // Sets wake_in_task_ for one wakeup path and restores the outer value on the way out: a wakeup
    // may nest in another (through a preemption).
    class InTaskScope {
    public:
        InTaskScope(bool& flag, bool in_task) : flag_(flag), outer_(flag) { flag = in_task; }
        ~InTaskScope() { flag_ = outer_; }
        InTaskScope(const InTaskScope&) = delete;
        InTaskScope& operator=(const InTaskScope&) = delete;

    private:
        bool& flag_;
        bool outer_;
    };

    // struct task_group with its per-CPU entity and runqueue (se[cpu], cfs_rq[cpu]).
    struct GroupCpu {
        SchedEntity se;
        CfsRq q;
        // cfs_rq->avg of the group's runqueue here, of which calc_group_shares() reads the load:
        // the weight queued here (delayed sleepers included), and the load of the tasks attached
        // here while they sleep, decaying; its utilisation is what the group's entity propagates.
        Pelt avg;
        double tg_contrib = 0;          // cfs_rq->tg_load_avg_contrib: its part of tg->load_avg
        Time tg_stamp = -kNsPerMs;      // cfs_rq->last_update_tg_load_avg
        // The group entity's own signals (se->avg): load while on the root's queue, at its weight,
        // which the root's load sums; util while one of its tasks runs here.
        Pelt se_avg;
        int64_t prop_runnable_sum = 0;  // cfs_rq->prop_runnable_sum: load attached or removed, not yet propagated
        bool propagate = false;         // cfs_rq->propagate: a task attached or removed since the entity's update
        mutable double h_load = 0;      // cfs_rq->h_load
        mutable int64_t h_load_jiffy = -1;  // cfs_rq->last_h_load_update
    };
    struct TaskGroupState {
        uint32_t shares = 1024;   // tg->shares
        double load_avg = 0;      // tg->load_avg: the sum of its runqueues' tg_contrib
        std::vector<GroupCpu> cpu;  // sized once: the entities' addresses are stable
    };
    std::deque<TaskGroupState> groups_;

    std::deque<Task> tasks_;  // stable addresses
    std::vector<Rq> rqs_;
    std::vector<LlcShared> llc_;  // indexed by sd_llc_id
    CpuSet idle_mask_, sched_idle_mask_;
    int64_t slice_ns_ = 0;
    Time tick_ns_ = 4 * kNsPerMs;
    uint64_t select_calls_ = 0;
    bool rd_overloaded_ = false;  // rd->overloaded
    uint64_t cfs_seq_ = 0;           // the clock of Task::cfs_seq (cfs_tasks order)
    Time nohz_next_balance_ = 0;     // nohz.next_balance
    int nohz_ilb_ = -1;              // the CPU a NOHZ balance kick is on its way to (-1: none)
    // The flags of the kick in flight (kick_ilb()'s nohz_flags).
    enum : uint8_t { NOHZ_STATS_KICK = 1, NOHZ_BALANCE_KICK = 2, NOHZ_NEXT_KICK = 4 };
    uint8_t nohz_kick_flags_ = 0;
    CpuSet nohz_idle_;                // nohz.idle_cpus_mask: CPUs that stopped their tick (rq->nohz_tick_stopped)
    bool nohz_needs_update_ = false;  // nohz.needs_update: a CPU stopped its tick since the last collation
    bool nohz_kick_lost_ = false;    // that kick was polled and the kernel drops it (polled_ilb_balances)
    int64_t nohz_next_blocked_ = 0;  // nohz.next_blocked, in jiffies
    bool nohz_has_blocked_ = false;  // nohz.has_blocked: an idle CPU's signals may not have decayed yet
    std::vector<Task*> lb_tasks_;    // detach_tasks()' walk of cfs_tasks (reused, no allocation)
    std::vector<EmPerfDomain> pds_;  // rd->pd
    bool eas_ = false;               // sched_energy_enabled()
    bool rd_overutilized_ = false;   // rd->overutilized
    int rd_overutilized_by_ = -1;    // the CPU found overutilized when it was set
    bool uclamp_used_ = false;       // uclamp_is_used()
    std::vector<EasCpu> eas_cpu_;    // eas_snapshot(): each CPU's signals now
};

}  // namespace wakesim
