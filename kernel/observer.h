// What the scheduler reports while it decides: structured events at its decision points, like the
// kernel's tracepoints and schedstats. The scheduler counts nothing for reports and writes no text;
// observers do (sim/: the counting observer behind metrics, the ftrace writer, the explain
// recorder). The hot-path events carry plain numbers, and the scheduler sends only those an
// observer asked for (interests()). The events that carry text (the header of
// select_task_rq_fair, policy rule names, domain names) are sent only for the select_task_rq call
// being explained (Scheduler::set_explain), between select_begin() and select_task_rq(), together
// with every step event of that call.
#pragma once
#include <cstdint>
#include <string>

#include "kernel/task.h"

namespace wakesim {

enum class MigrationCause : uint8_t { wakeup, balance, newidle, active, kCount };

// Where select_task_rq ended.
enum class SelectOutcome : uint8_t {
    pinned,           // select_task_rq skipped the fair class (one CPU allowed / migrate_disable)
    policy_early,     // a policy rule before WF_CURRENT_CPU
    current_cpu,      // WF_CURRENT_CPU short-circuit
    policy_affine,    // a policy rule in the affine branch
    sis_target,       // select_idle_sibling step 1
    sis_prev,         // step 2
    sis_kthread,      // step 3
    sis_recent,       // step 4
    sis_capacity,     // step 5 (asym)
    sis_smt,          // step 7
    sis_scan,         // step 8
    sis_fallback,     // step 6 (no LLC) or 9 (prev_aff, recent, or target)
    slow_path,        // sched_balance_find_dst_cpu
    eas,              // find_energy_efficient_cpu (EAS on, root domain not overutilized)
    vcpu_pack,        // the guest kernel's sched_vcpu_pack step, before everything else
    kCount
};

// How a successful try_to_wake_up put the task on a runqueue (ttwu_stat and the IPI it cost).
enum class WokenVia : uint8_t {
    running,        // ttwu_runnable(): it had not gone to sleep yet (still on its CPU, or preempted
                    // on the way to schedule()): the wakeup cancels the sleep
    delayed,        // ttwu_runnable(): asleep but still queued (delayed dequeue), requeued in place
    queue,          // ttwu_do_activate() by the waker, no IPI
    queue_ipi,      // the same onto an idle remote CPU, which a reschedule IPI wakes
    queue_poll,     // the same onto an idle remote CPU that polls its flags: no IPI
    wakelist,       // the target's wake list; its IPI was already on the way
    wakelist_ipi,   // the target's wake list and a call-function IPI
    wakelist_poll,  // the target's wake list; the target polls in idle, no IPI needed
};

// ---------------------------------------------------------------------------------------------
// select_task_rq decision events, in the order the wake path sends them.

// select_task_rq_fair() entry (explained call only).
struct SelectFairEv {
    int wakee = -1;
    std::string wakee_comm;
    int prev = -1;
    int waker = -1;  // -1: woken from interrupt or timer context
    std::string waker_comm;
    int this_cpu = -1;
    uint32_t wake_flags = 0;
};

// select_task_rq() did not consult the fair class (explained call only).
struct PinnedEv {
    bool migration_disabled = false;  // else: one allowed CPU
    int cpu = -1;
    SelectFairEv call;  // the wakee, waker and flags, as select_task_rq_fair() would have had them
};

enum class PolicyHook : uint8_t { early, after_wake_affine, in_feec };

// A policy placement rule returned a CPU (explained call only).
struct PolicyRuleEv {
    std::string rule;
    PolicyHook hook = PolicyHook::early;
    int cpu = -1;
};

// record_wakee() and wake_wide(): whether select_task_rq_fair wants the affine path.
struct WantAffineEv {
    uint32_t waker_flips = 0;
    uint32_t wakee_flips = 0;
    int llc_size = 0;
    bool wide = false;
    bool want_affine = false;
};

// The domain walk found the first SD_WAKE_AFFINE domain spanning prev (explained call only).
struct DomainEv {
    std::string name;
    bool wake_affine = false;  // false: this_cpu == prev, wake_affine() skipped
    bool sync = false;
};

enum class AffineIdle : uint8_t {
    off,          // WA_IDLE disabled
    waker_idle,   // this_cpu idle and cache-affine with prev (interrupt wake): prev if idle, else this_cpu
    sync_alone,   // sync and the waker is alone on this_cpu
    prev_idle,    // prev idle
    no_decision,
};
enum class AffineWeight : uint8_t {
    not_run,       // WA_WEIGHT disabled, or wake_affine_idle decided
    sync_heavier,  // sync and the waker's load exceeds its CPU's: this_cpu
    compared,      // this_eff < prev_eff: this_cpu, else prev
};

// wake_affine(): which branch decided, with wake_affine_weight's numbers.
struct WakeAffineEv {
    int this_cpu = -1;
    int prev = -1;
    bool sync = false;
    AffineIdle idle = AffineIdle::off;
    int idle_target = -1;  // wake_affine_idle's answer, -1: none
    AffineWeight weight = AffineWeight::not_run;
    double this_eff = 0;  // scaled as compared (load x 100 x capacity with WA_BIAS)
    double prev_eff = 0;
    int target = -1;  // what wake_affine_idle/weight decided: this_cpu, prev, or -1 (none)
    int cpu = -1;     // what wake_affine returned: this_cpu when target is this_cpu, else prev
};

// select_idle_sibling() entry (explained call only).
struct SisBeginEv {
    int prev = -1;
    int target = -1;
};

// select_idle_sibling step 1 failed: the target is busy (explained call only).
struct SisTargetBusyEv {
    int target = -1;
    int nr_running = 0;
    bool pending = false;  // a wakeup is queued on its wake list (ttwu_pending): idle_cpu() says busy
    bool fits = true;      // false: usable, but the task does not fit it (asymmetric capacities)
};

enum class PrevSkip : uint8_t { is_target, busy, not_cache_affine, does_not_fit };

// select_idle_sibling step 2 failed (explained call only; an idle prev in another cluster is
// remembered for the fallback without an event).
struct SisPrevEv {
    int prev = -1;
    PrevSkip why = PrevSkip::busy;
};

// select_idle_cpu() ran.
struct SelectIdleCpuEv {
    bool idle_core_scan = false;  // has_idle_cores: select_idle_core() on each core
    int nr_idle_scan = 0;         // the LLC's SIS_UTIL scan depth
    int probes = 0;               // CPUs looked at
    int cpu = -1;                 // -1: nothing found
};

enum class SisFallback : uint8_t { none, no_llc, prev_other_cluster, recent, target };

// How the energy-aware branch of select_task_rq_fair went (sent only where EAS is enabled).
enum class FeecResult : uint8_t {
    overutilized,    // the root domain is overutilized: the symmetric path runs
    no_asym_domain,  // no asymmetric-capacity domain of this_cpu spans prev: the symmetric path
    no_util,         // the task has no utilisation estimate: prev
    util_changed,    // an energy below the base (a CPU's utilisation moved): prev
    prev_kept,       // no candidate beats prev
    best,            // the candidate with the lowest energy
    policy,          // a policy's in_feec rule chose the CPU before the energy estimate
};

// find_energy_efficient_cpu(): its candidates' energy deltas (the em_cpu_energy() units).
struct FeecEv {
    FeecResult result = FeecResult::overutilized;
    int overutilized_cpu = -1;  // for overutilized: the CPU whose utilisation set rd->overutilized
    int prev = -1;
    double prev_delta = -1;     // -1: prev was no candidate (it does not fit the task)
    int best_cpu = -1;          // the best other candidate, -1: none
    double best_delta = -1;
    int cpu = -1;               // feec's answer, -1: the symmetric path runs
};

// Where select_task_rq ended, at the point it was decided.
struct SelectOutcomeEv {
    SelectOutcome outcome = SelectOutcome::pinned;
    int cpu = -1;
    SisFallback fallback = SisFallback::none;  // for sis_fallback: which CPU it fell back to
};

// select_task_rq() returned (after select_fallback_rq()), with a summary of the steps.
struct SelectResultEv {
    int wakee = -1;
    int cpu = -1;
    int from = -1;  // task_cpu before the wakeup
    SelectOutcome outcome = SelectOutcome::kCount;  // where it was decided (kCount: nowhere)
    bool wide = false;    // wake_wide() said wide
    bool affine = false;  // wake_affine() chose this_cpu
    int sis_probes = 0;   // CPUs select_idle_cpu() looked at
};

// Which events an observer wants (SchedObserver::interests()); the scheduler skips the others.
enum ObsInterest : uint32_t {
    kObsTtwuWaking = 1u << 0,
    kObsTtwuWoken = 1u << 1,
    kObsTtwuWakeup = 1u << 2,
    kObsSelectSteps = 1u << 3,  // feec, want_affine, wake_affine, select_idle_cpu, select_outcome
    kObsSelectResult = 1u << 4,
    kObsMigrate = 1u << 5,
    kObsSwitch = 1u << 6,
    kObsSwitchedIn = 1u << 7,
    kObsBalance = 1u << 8,
    kObsReschedIpi = 1u << 9,
    kObsAll = ~0u,
};

// ---------------------------------------------------------------------------------------------

class SchedObserver {
public:
    virtual ~SchedObserver() = default;
    // Read once, when the observer is set.
    virtual uint32_t interests() const { return kObsAll; }

    // try_to_wake_up (core.c).
    // sched_waking: `p` sleeps and is being woken from this_cpu; waker nullptr: interrupt context.
    virtual void ttwu_waking(const Task& /*p*/, const Task* /*waker*/, int /*this_cpu*/) {}
    // A successful wakeup (ttwu_stat): p is or will be runnable on `cpu`. Sent after
    // ttwu_waking (except for WokenVia::running) and the placement's events; `placement` is
    // select_task_rq's summary, nullptr when the wakeup needed none (ttwu_runnable).
    virtual void ttwu_woken(const Task& /*p*/, int /*cpu*/, int /*this_cpu*/, WokenVia /*via*/,
                            const SelectResultEv* /*placement*/) {}
    // sched_wakeup: p was enqueued on `cpu`, whose current task is `curr` (nullptr: idle).
    virtual void ttwu_wakeup(const Task& /*p*/, int /*cpu*/, const Task* /*curr*/) {}
    // wake_up_new_task(): a new task's first enqueue, on `parent_cpu` (the trace's sched_wakeup_new;
    // sent with kObsTtwuWakeup).
    virtual void wakeup_new(const Task& /*p*/, int /*parent_cpu*/, const Task* /*parent_curr*/) {}

    // select_task_rq and the fair wake path (fair.c), in call order.
    virtual void select_begin(const Task& /*p*/, Time /*now*/) {}  // explained call only
    virtual void select_fair(const SelectFairEv&) {}
    virtual void pinned(const PinnedEv&) {}
    virtual void policy_rule(const PolicyRuleEv&) {}
    virtual void feec(const FeecEv&) {}
    virtual void want_affine(const WantAffineEv&) {}
    virtual void domain(const DomainEv&) {}
    virtual void wake_affine(const WakeAffineEv&) {}
    virtual void sis_begin(const SisBeginEv&) {}
    virtual void sis_target_busy(const SisTargetBusyEv&) {}
    virtual void sis_prev(const SisPrevEv&) {}
    virtual void select_idle_cpu(const SelectIdleCpuEv&) {}
    virtual void select_outcome(const SelectOutcomeEv&) {}
    virtual void select_task_rq(const SelectResultEv&) {}

    // set_task_cpu(): p moves from `from` to `to` (never for fork placement).
    virtual void migrate(const Task& /*p*/, int /*from*/, int /*to*/, MigrationCause) {}
    // __schedule() switched from prev (nullptr: idle) to next (nullptr: idle); prev_state is
    // 'R' (preempted), 'S' (asleep) or 'X' (exited).
    virtual void sched_switch(int /*cpu*/, const Task* /*prev*/, char /*prev_state*/, const Task* /*next*/) {}
    // finish_task_switch(): t runs on cpu.
    virtual void switched_in(int /*cpu*/, const Task& /*t*/) {}
    // sched_balance_rq() ran at a domain level (periodic, or newidle).
    virtual void balance(int /*cpu*/, int /*level*/, bool /*newidle*/, bool /*moved*/) {}
    // resched_curr() sent the reschedule IPI to a CPU running a task.
    virtual void resched_ipi(int /*cpu*/) {}
};

}  // namespace wakesim
