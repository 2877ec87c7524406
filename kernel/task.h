// A task as the scheduler sees it (task_struct and its sched_entity): placement state (prev CPU,
// recent_used_cpu, wakee flips), EEVDF entity state, PELT signals, schedstat counters, and the
// cache warmth the hardware prices. What the task is doing on the CPU is the machine's
// (sim/cpu_exec).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "hw/cache_warmth.h"
#include "topology/cpuset.h"

namespace wakesim {

enum class TaskState : uint8_t {
    unstarted,
    running,   // rq->curr on its CPU
    runnable,  // queued, waiting for its CPU
    waking,    // on a remote wake list, IPI in flight
    sleeping,
    exited,
};

enum class SchedPolicy : uint8_t { normal, batch, idle };

// Role a workload gives a task; policies use it for pair marks and attributes.
enum class TaskRole : uint8_t { other, requester, server };

// struct sched_avg: the sums in the kernel's fixed point (kernel/pelt.h), the averages derived
// from them when a 1024 us period ends.
struct Pelt {
    double util_avg = 0;  // 0..1024
    double load_avg = 0;  // weight-scaled runnable average
    double runnable_avg = 0;  // runnable (not delayed) tasks x 1024, time-averaged
    double util_est = 0;      // the EWMA of util_avg at dequeue (util_est_update())
    bool util_avg_unchanged = false;  // UTIL_AVG_UNCHANGED: util_avg not recomputed since util_est's last update
    Time last_update = 0;  // advances in whole 1024 ns units
    uint64_t load_sum = 0;
    uint64_t util_sum = 0;
    uint64_t runnable_sum = 0;
    uint32_t period_contrib = 0;  // 1024 ns units of the current period so far
    // Migrated by a wakeup and not yet enqueued (last_update_time 0 in the kernel): the enqueue
    // attaches it at the new runqueue's time, without aging it (update_load_avg(DO_ATTACH)).
    bool attach_pending = false;
};

// A migrated task's signals as remove_entity_load_avg() queues them on the runqueue it left.
// The averages come off the runqueue's averages. A wakeup's migration (remove_entity_load_avg())
// takes avg x the runqueue's divider off its sums when it is applied (the rm_* part:
// update_cfs_rq_load_avg()), so what the task ran since its last period boundary stays there
// until it decays; a balancer's (detach_entity_load_avg()) takes the task's own sums.
struct PeltRemoved {
    int group = -1;
    double util_avg = 0, runnable_avg = 0, load_avg = 0;
    uint64_t util_sum = 0, runnable_sum = 0, load_sum = 0;  // load_sum weighted, as the CPU's
    // Of the averages, the part whose sums are avg x divider (wakeup migrations).
    double rm_util_avg = 0, rm_runnable_avg = 0, rm_load_avg = 0;
    // The last update and period_contrib these values are aligned with (the task's, as it
    // leaves): if the CPU's signal decays on before they come off, they decay with it.
    Time stamp = 0;
    uint32_t period_contrib = 0;
    void add(const PeltRemoved& r) {
        util_avg += r.util_avg;
        runnable_avg += r.runnable_avg;
        load_avg += r.load_avg;
        util_sum += r.util_sum;
        runnable_sum += r.runnable_sum;
        load_sum += r.load_sum;
        rm_util_avg += r.rm_util_avg;
        rm_runnable_avg += r.rm_runnable_avg;
        rm_load_avg += r.rm_load_avg;
    }
};

struct CfsRq;

__extension__ typedef __int128 Int128;  // weighted vruntime sums overflow 64 bits

// struct sched_entity: what EEVDF orders on one runqueue. A task is one; a task group (an
// autogroup, or a cgroup with the cpu controller: CONFIG_FAIR_GROUP_SCHED) has one per CPU in the
// root runqueue, whose my_q is the group's own runqueue on that CPU.
struct SchedEntity {
    int64_t vruntime = 0;
    int64_t deadline = 0;
    int64_t slice = 0;
    int64_t vlag = 0;
    int64_t vprot = 0;
    uint32_t weight = 1024;
    bool on_rq = false;
    bool sched_delayed = false;
    bool rel_deadline = false;  // deadline holds deadline - vruntime (PLACE_REL_DEADLINE)
    CfsRq* my_q = nullptr;  // a group's entity: its runqueue on this CPU; nullptr: a task
    CfsRq* queued_on = nullptr;  // the runqueue whose queue (and sums) hold it; nullptr: none
};

// struct cfs_rq: the EEVDF queue of a CPU (the root) or of a task group on that CPU.
struct CfsRq {
    std::vector<SchedEntity*> queue;  // every on_rq entity, curr included, delayed included
    // Over `queue`: the sum of weight x vruntime and of the weights, kept as entities join, leave,
    // run and are reweighted, so that V and eligibility need no walk (cfs_rq->avg_vruntime and
    // avg_load, here relative to 0: the sums are exact integers).
    Int128 vw_sum = 0;
    int64_t w_sum = 0;
    SchedEntity* next = nullptr;      // cfs_rq->next: set by NEXT_BUDDY, honoured by PICK_BUDDY
    SchedEntity* se = nullptr;        // the group's entity in the root (nullptr: this is the root)
    int group = -1;                   // the task group (-1: the root)
    // cfs_rq->load.weight: its queued entities' weights, delayed ones included (the root's: its
    // tasks' and the groups' entities'; a group's: its tasks')
    uint64_t load_weight = 0;
};

struct Task : SchedEntity {
    int id = 0;
    std::string comm;  // no spaces (ftrace comm)
    TaskState state = TaskState::unstarted;
    SchedPolicy policy = SchedPolicy::normal;
    TaskRole role = TaskRole::other;
    int nice = 0;
    int group = -1;  // the task group (fair group scheduling) it is queued in; -1: the root
    bool per_cpu_kthread = false;
    bool migration_disabled = false;
    bool in_iowait = false;  // the pending wakeup ends an I/O wait (iowait boost on enqueue)

    // Placement state.
    CpuSet allowed;
    int nr_cpus_allowed = 0;
    int max_allowed_capacity = 0;  // the largest capacity among the allowed CPUs (set_task_max_allowed_capacity())
    int cpu = -1;       // task_cpu
    int wake_cpu = -1;  // p->wake_cpu
    int recent_used_cpu = -1;
    int last_wakee = -1;
    uint32_t wakee_flips = 0;
    bool long_idle = false;  // TaskSpec::long_idle: starts with no PELT history
    Time wakee_flip_decay_ts = 0;

    // The workload's annotation of request/reply pairs (0: none); policies may recognise it.
    uint32_t pair_id = 0;

    // uclamp_eff_value(p, UCLAMP_MIN / UCLAMP_MAX): the task's clamps (sched_setattr()'s
    // sched_util_min/max) restricted by its group's (uclamp_tg_restrict()); 0 and 1024 clamp nothing.
    int uclamp_min = 0;
    int uclamp_max = 1024;

    // EEVDF entity: the SchedEntity base.
    double util_est_queued = 0;  // what util_est_enqueue() added to the runqueue's util_est
    Time exec_start = 0;  // last time it started running (task_hot)
    // Position in the runqueue's cfs_tasks list: enqueue and pick move a task to the head
    // (largest value); detach_tasks() walks from the tail (smallest).
    uint64_t cfs_seq = 0;

    Pelt pelt;

    // set_current_state(TASK_INTERRUPTIBLE) done, schedule() not yet: the task still runs (or
    // was preempted on the way); a wakeup now just cancels the sleep (ttwu_runnable).
    bool block_pending = false;

    // Cache warmth: where the working set lives and how long ago the task left it.
    CacheWarmth cache;

    // Schedstats.
    uint64_t nr_migrations = 0;
    uint64_t nr_wakeups = 0;
    Time sum_exec = 0;
};

}  // namespace wakesim
