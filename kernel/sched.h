// The scheduler core: per-CPU fair runqueues (EEVDF), try_to_wake_up and the fair wake path,
// context switches, idle, ticks, periodic and newidle load balancing. It runs tasks on behalf of
// a TaskDriver (the workload) and knows nothing of what the tasks do.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "kernel/wake_policy.h"
#include "engine/engine.h"
#include "hw/hardware.h"
#include "hw/machine_profile.h"
#include "metrics/metrics.h"
#include "engine/rng.h"
#include "kernel/features.h"
#include "kernel/task.h"
#include "kernel/wake_flags.h"
#include "topology/sched_domains.h"
#include "topology/topology.h"

namespace wakesim {

class TraceSink;
class WakeExplain;

// What a task does next, as its driver says.
struct Action {
    enum Kind : uint8_t { run, block, exit } kind;
    int64_t ns = 0;  // reference-capacity nanoseconds of CPU work (run)
    static Action Run(int64_t ns) { return {run, ns}; }
    static Action Block() { return {block, 0}; }
    static Action Exit() { return {exit, 0}; }
};

class TaskDriver {
public:
    virtual ~TaskDriver() = default;
    // The task finished its previous action (or starts). The driver may wake other tasks through
    // Scheduler::wake() and returns what the task does next.
    virtual Action next_action(Task& t) = 0;
    // A timer armed with Scheduler::arm_timer fired.
    virtual void on_timer(int /*task*/, uint32_t /*cookie*/) {}
};

struct TaskSpec {
    std::string comm;
    CpuSet allowed;  // empty = all CPUs
    int nice = 0;
    SchedPolicy policy = SchedPolicy::normal;
    TaskRole role = TaskRole::other;
    uint32_t pair_id = 0;
    bool per_cpu_kthread = false;
    int64_t footprint_kib = 0;  // working set refilled after running elsewhere
};

struct SchedConfig {
    SchedFeatures features;
    int64_t migration_cost_ns = 500000;  // sysctl_sched_migration_cost
    int64_t base_slice_ns = 700000;      // sysctl_sched_base_slice before ilog2 scaling
    bool start_sis_scan_full = true;     // nr_idle_scan starts at llc weight (no boot transient)
};

class Scheduler final : public EventTarget, public HardwareClient {
public:
    Scheduler(Engine& engine, const Topology& topo, const SchedDomains& sd, const MachineProfile& prof,
              PolicyRun& policy, SchedConfig cfg, Metrics& metrics, uint64_t seed);
    ~Scheduler() override;

    void set_driver(TaskDriver* d) { driver_ = d; }
    void set_trace(TraceSink* t) { trace_ = t; }
    // Record the decision path of the n-th (1-based) select_task_rq call into `ex`.
    void set_explain(uint64_t nth_wakeup, WakeExplain* ex) { explain_nth_ = nth_wakeup; explain_ = ex; }

    int add_task(const TaskSpec& spec);
    // wake_up_new_task: fork placement from parent_cpu through the slow path; not a migration.
    void start_task(int task, Time at, int parent_cpu);

    // try_to_wake_up(wakee) from the task currently served by the driver (or from interrupt
    // context when called outside next_action). Returns true if the task was woken.
    bool wake(int wakee, const WakeSite& site);
    void arm_timer(int task, Time at, uint32_t cookie);

    // Queries used by the wake path and by policies.
    const Topology& topo() const { return topo_; }
    const SchedDomains& domains() const { return sd_; }
    const MachineProfile& profile() const { return prof_; }
    const SchedConfig& config() const { return cfg_; }
    const PolicyRun& policy() const { return policy_; }
    Time now() const { return engine_.now(); }
    int nr_running(int cpu) const { return rqs_[cpu].nr_running; }
    int nr_delayed(int cpu) const { return rqs_[cpu].nr_delayed; }
    bool available_idle_cpu(int cpu) const { return idle_mask_.test(cpu); }
    bool sched_idle_cpu(int cpu) const { return sched_idle_mask_.test(cpu); }
    bool usable(int cpu) const { return idle_mask_.test(cpu) || sched_idle_mask_.test(cpu); }
    const CpuSet& idle_mask() const { return idle_mask_; }
    const CpuSet& sched_idle_mask() const { return sched_idle_mask_; }
    double cpu_util(int cpu) const override;  // PELT util_avg of the CPU, 0..capacity
    double cpu_load(int cpu) const;       // PELT load_avg of the CPU
    double task_util(const Task& t) const;  // max(util_avg, util_est)
    double task_load(const Task& t) const;
    int capacity_of(int cpu) const { return topo_.cpu(cpu).capacity; }
    bool task_fits_cpu(const Task& t, int cpu) const;
    const Task& task(int id) const { return tasks_[static_cast<size_t>(id)]; }
    Task& task_mut(int id) { return tasks_[static_cast<size_t>(id)]; }
    int nr_tasks() const { return static_cast<int>(tasks_.size()); }
    const Task* current(int cpu) const { return rqs_[cpu].curr; }
    bool has_idle_cores(int cpu) const;
    int nr_idle_scan(int cpu) const;
    uint64_t select_calls() const { return select_calls_; }
    // Test and scenario hooks.
    void set_nr_idle_scan(int cpu, int v);
    void set_has_idle_cores(int cpu, bool v);

    // Fair wake path building blocks (kernel/sched/fair.c), reusable by policies.
    int select_task_rq_fair(Task& p, int prev, uint32_t wake_flags, const Task* waker, int this_cpu,
                            WakeExplain* ex);
    bool wake_wide(const Task& p, const Task* waker, int this_cpu) const;
    int wake_affine(int sd_level, const Task& p, const Task* waker, int this_cpu, int prev, bool sync,
                    WakeExplain* ex);
    int select_idle_sibling(Task& p, const Task* waker, int this_cpu, int prev, int target,
                            WakeExplain* ex);

    // Invariant checks for tests: throws std::logic_error describing the first violation.
    void check_invariants() const;
    // Busy (non-idle) time per CPU so far, including the current busy stretch.
    Time cpu_busy_ns(int cpu) const override;
    void speed_changed(int cpu) override;
    Hardware& hardware() { return *hw_; }
    const Hardware& hardware() const { return *hw_; }
    // Extra kernel or user time for the task the driver is serving (shared-data refills).
    void charge_current(int64_t ns) {
        if (driving_ && ns > 0) driving_->overhead_left += ns;
    }
    int driving_cpu() const { return driving_cpu_; }

    void on_event(const Event& e) override;

private:
    enum EvKind : uint16_t { kSegEnd, kSwitchEnd, kIpi, kTick, kTimer, kStart };
    enum class Mode : uint8_t { idle, switching, running };
    enum class SegKind : uint8_t { none, overhead, work };

    struct DomainState {
        Time last_balance = 0;
        int64_t balance_interval_ms = 1;
        int nr_balance_failed = 0;
        int64_t max_newidle_lb_cost = 0;
        int newidle_ratio = 512;
    };
    struct Rq {
        std::vector<Task*> queue;  // every on_rq entity, curr included, delayed included
        Task* curr = nullptr;      // nullptr: the idle task
        int nr_running = 0;
        int nr_delayed = 0;
        int nr_sched_idle = 0;  // runnable (non-delayed) SCHED_IDLE tasks
        bool ttwu_pending = false;
        bool ipi_in_flight = false;
        bool overloaded = false;  // two or more runnable tasks (feeds rd->overloaded)
        std::vector<Task*> wake_list;
        Mode mode = Mode::idle;
        uint32_t gen = 0;
        SegKind seg = SegKind::none;
        Time seg_start = 0;
        double seg_speed = 1.0;
        bool need_resched = false;
        bool tick_armed = false;
        Time idle_stamp = 0;  // 0: not idle
        int64_t avg_idle = 0;
        int64_t max_idle_balance_cost = 0;
        Time busy_since = -1;  // start of the current busy stretch, -1 when idle
        Time busy_total = 0;
        Pelt pelt;  // util_avg/load_avg of the CPU (blocked contributions included)
        Time next_balance = 0;
        std::vector<DomainState> dom;
    };
    struct LlcShared {
        bool has_idle_cores = false;
        int nr_idle_scan = 0;
    };

    // try_to_wake_up pieces (kernel/sched/core.c).
    bool try_to_wake_up(Task& p, uint32_t flags, Task* waker, int this_cpu);
    int select_task_rq(Task& p, int cpu_hint, uint32_t& flags, const Task* waker, int this_cpu);
    void set_task_cpu(Task& p, int cpu, MigrationCause cause);
    bool ttwu_queue_cond(const Task& p, int cpu, int this_cpu) const;
    void ttwu_queue(Task& p, int cpu, uint32_t flags, Task* waker, int this_cpu);
    void ttwu_do_activate(int cpu, Task& p, uint32_t flags);
    void record_wakee(Task* waker, const Task& p);
    int find_dst_cpu(const Task& p, int cpu, int prev, uint32_t sd_flag);
    int select_idle_cpu(const Task& p, int sd_level_cpu, bool has_idle_core, int target, int& probes);
    int select_idle_capacity(const Task& p, int target);

    // EEVDF runqueue.
    int64_t avg_vruntime(const Rq& rq) const;
    bool entity_eligible(const Rq& rq, const Task& t) const;
    Task* pick_eevdf(Rq& rq, bool protect);
    void place_entity(Rq& rq, Task& t, bool initial);
    void enqueue(int cpu, Task& t, bool initial);
    void dequeue(int cpu, Task& t);  // removes from the queue entirely
    void update_curr(int cpu, bool kernel_point = true);
    bool check_preempt_wakeup(int cpu, Task& p, uint32_t flags);
    int64_t calc_delta_fair(int64_t delta, const Task& t) const { return delta * 1024 / t.weight; }

    // CPU execution.
    void resched(int cpu);
    void kick_cpu(int cpu, Time delay);
    void preempt_now(int cpu);
    void schedule(int cpu);
    void go_idle(int cpu);
    void run_curr(int cpu);
    void start_segment(int cpu, SegKind kind, int64_t ref_ns);
    void stop_segment(int cpu);
    void block_curr(int cpu);
    void exit_curr(int cpu);
    void arm_tick(int cpu);
    void on_tick(int cpu);
    void process_wake_list(int cpu);
    void update_idle_state(int cpu);
    void update_overload(int cpu);
    void update_idle_core(int cpu);
    double speed(int cpu) const;

    // PELT.
    void pelt_update_task(Task& t, bool running, bool runnable);
    void pelt_update_cpu(int cpu);
    static double decay(Time dt);

    // Load balancing (kernel/sched/fair.c: sched_balance_*).
    void periodic_balance(int cpu, bool idle);
    bool balance_domain(int cpu, int level, bool newidle);
    bool newidle_balance(int cpu);
    bool can_migrate(const Task& t, int dst, int level) const;
    void move_task(Task& t, int src, int dst, MigrationCause cause);
    void update_idle_cpu_scan(int cpu, int level);
    void kick_idle_balance(int busy_cpu);

    void count_switch(int cpu, Task* prev, Task* next, char prev_state);
    bool explain_this() const;

    Engine& engine_;
    uint16_t target_;
    const Topology& topo_;
    const SchedDomains& sd_;
    const MachineProfile& prof_;
    PolicyRun& policy_;
    SchedConfig cfg_;
    Metrics& m_;
    std::unique_ptr<Hardware> hw_;
    RngStream rng_balance_;
    RngStream rng_costs_;
    int64_t jitter(int64_t ns);
    TaskDriver* driver_ = nullptr;
    TraceSink* trace_ = nullptr;
    WakeExplain* explain_ = nullptr;
    uint64_t explain_nth_ = 0;

    std::deque<Task> tasks_;  // stable addresses
    std::vector<Rq> rqs_;
    std::vector<LlcShared> llc_;  // indexed by sd_llc_id
    CpuSet idle_mask_, sched_idle_mask_;
    int64_t slice_ns_ = 0;
    Time tick_ns_ = 4 * kNsPerMs;
    uint64_t select_calls_ = 0;
    int64_t ttwu_cost_ = 0;
    int nr_overloaded_ = 0;  // runqueues with >= 2 runnable tasks: rd->overloaded when > 0  // kernel time of the try_to_wake_up in progress, charged to the waker
    Task* driving_ = nullptr;  // the task whose next_action is running
    int driving_cpu_ = -1;
    int irq_cpu_ = -1;  // CPU whose IPI handler is running
};

}  // namespace wakesim
