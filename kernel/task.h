// A task as the fair class sees it: placement state (prev CPU, recent_used_cpu, wakee flips),
// EEVDF entity state, PELT signals, and counters for metrics.
#pragma once
#include <cstdint>
#include <string>

#include "topology/cpuset.h"
#include "engine/engine.h"

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

struct Pelt {
    double util_avg = 0;  // 0..1024
    double load_avg = 0;  // weight-scaled runnable average
    double util_est = 0;
    Time last_update = 0;
};

struct Task {
    int id = 0;
    std::string comm;  // no spaces (ftrace comm)
    TaskState state = TaskState::unstarted;
    SchedPolicy policy = SchedPolicy::normal;
    TaskRole role = TaskRole::other;
    int nice = 0;
    uint32_t weight = 1024;
    bool per_cpu_kthread = false;
    bool migration_disabled = false;
    bool in_iowait = false;  // the pending wakeup ends an I/O wait (iowait boost on enqueue)

    // Placement state.
    CpuSet allowed;
    int nr_cpus_allowed = 0;
    int cpu = -1;       // task_cpu
    int wake_cpu = -1;  // p->wake_cpu
    int recent_used_cpu = -1;
    int last_wakee = -1;
    uint32_t wakee_flips = 0;
    Time wakee_flip_decay_ts = 0;

    // The workload's annotation of request/reply pairs (0: none); policies may recognise it.
    uint32_t pair_id = 0;

    // EEVDF entity.
    int64_t vruntime = 0;
    int64_t deadline = 0;
    int64_t slice = 0;
    int64_t vlag = 0;
    int64_t vprot = 0;
    bool on_rq = false;
    bool sched_delayed = false;
    Time exec_start = 0;  // last time it started running (task_hot)

    Pelt pelt;

    // Cache warmth: where the working set lives and how long ago the task left it.
    int64_t footprint_kib = 0;
    int cache_cpu = -1;
    Time cache_left_at = 0;
    Time cache_busy_at_leave = 0;  // that CPU's busy time when the task left

    // Execution of the workload's current action.
    int64_t work_left = 0;      // reference-ns of the current Run action still to do
    int64_t overhead_left = 0;  // kernel time owed before the next action (wake costs)
    bool block_pending = false; // the action after the overhead is Block

    // Counters.
    uint64_t nr_migrations = 0;
    uint64_t nr_wakeups = 0;
    Time sum_exec = 0;
    Time wake_time = -1;  // when the pending wakeup was issued (wake-to-run latency)
};

}  // namespace wakesim
