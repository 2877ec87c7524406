// The simulated CPUs under the scheduler: what each CPU is doing (idle, switching, running a
// segment of a task's work or of kernel overhead), the timing of IPIs, context switches and
// ticks, the cost of the kernel's own wake-path work (charged to the waker, with seeded jitter),
// busy-time accounting, timers, and the protocol with the workload that says what tasks do
// (TaskDriver). It implements the scheduler's arch side (kernel/arch.h) and calls the
// scheduler's entry points when the machine reaches them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/rng.h"
#include "hw/hardware.h"
#include "hw/machine_profile.h"
#include "kernel/arch.h"
#include "kernel/sched.h"
#include "kernel/task.h"
#include "kernel/wake_flags.h"
#include "metrics/metrics.h"

namespace wakesim {

// Simulated time stood still: the machine handled kMaxEventsAtOneInstant events (or a task took
// as many steps) without the clock moving, as with a profile whose costs are all "0ns". The
// runner reports it as an input error naming the scenario.
class TimeStandsStill : public std::runtime_error {
public:
    TimeStandsStill(Time at, const std::string& what) : std::runtime_error(what), at_(at) {}
    Time at() const { return at_; }

private:
    Time at_;
};

// What a task does next, as its driver says.
struct Action {  // 16 bytes: returned in two registers
    int64_t ns = 0;  // reference-capacity nanoseconds of CPU work (run)
    enum Kind : uint8_t { run, block, exit } kind;
    // run: the work continues a system call the task's previous step was inside; a preemption
    // asked for meanwhile waits for the call's return to user space unless preempt_full.
    bool in_syscall = false;
    // run: the work runs with preemption off (a wait queue's lock held: __wake_up_common()), under
    // every preemption model; a reschedule asked for meanwhile waits for the next action.
    bool atomic = false;
    // run: work joined from pieces (ProgramDriver) gives its first piece's length here; that
    // piece ends with a return to user space, where a reschedule set from another CPU is seen
    // before its IPI lands. 0: no such point inside the work.
    int32_t first = 0;
    static Action Run(int64_t ns) { return {ns, run}; }
    static Action RunInSyscall(int64_t ns) { return {ns, run, true}; }
    static Action RunAtomic(int64_t ns) { return {ns, run, true, true}; }
    static Action Block() { return {0, block}; }
    // block: the task sleeps in the system call its previous step made its wakeups in (a FUSE
    // requester in request_wait_answer); under preempt=none/voluntary they do not preempt it first.
    static Action BlockInSyscall() { return {0, block, true}; }
    static Action Exit() { return {0, exit}; }
};
static_assert(sizeof(Action) == 16);

class TaskDriver {
public:
    virtual ~TaskDriver() = default;
    // The task finished its previous action (or starts). The driver may wake other tasks through
    // CpuExec::wake() and returns what the task does next.
    virtual Action next_action(Task& t) = 0;
    // A timer armed with CpuExec::arm_timer fired.
    virtual void on_timer(int /*task*/, uint32_t /*cookie*/) {}
    // The task left its CPU (preempted, or switched out to sleep).
    virtual void switched_out(const Task& /*t*/) {}
};

class CpuExec final : public EventTarget, public SchedArch, public HardwareClient {
public:
    CpuExec(Engine& engine, Scheduler& sched, Hardware& hw, const MachineProfile& prof, uint64_t seed);
    CpuExec(const CpuExec&) = delete;
    CpuExec& operator=(const CpuExec&) = delete;

    void set_driver(TaskDriver* d) { driver_ = d; }
    // The run's metrics, for what a workload measures itself (FUSE request timing); may be null.
    void set_metrics(Metrics* m) { metrics_ = m; }
    Metrics* metrics() { return metrics_; }

    // What a workload uses.
    int add_task(const TaskSpec& spec);
    // The task is forked from parent_cpu at `at` (wake_up_new_task).
    void start_task(int task, Time at, int parent_cpu);
    // try_to_wake_up(wakee) from the task the driver is serving (or from interrupt context when
    // called outside next_action). Returns true if the task was woken.
    bool wake(int wakee, const WakeSite& site) { return sched_.wake(wakee, site, driving_, driving_cpu_); }
    void arm_timer(int task, Time at, uint32_t cookie);
    // Takes `ns` back from the end of the work `task` was given last (work its driver planned
    // ahead), if the task has more than that still to do; returns false, changing nothing, if not.
    bool take_back_work(int task, int64_t ns);
    // Extra kernel or user time for the task the driver is serving (shared-data refills).
    void charge_current(int64_t ns) {
        if (driving_ && ns > 0) cpu_of(driving_cpu_).ctx.overhead_left += ns;
    }
    int driving_cpu() const { return driving_cpu_; }
    const Task* driving_task() const { return driving_; }
    Time now() const { return engine_.now(); }
    Scheduler& sched() { return sched_; }
    const Scheduler& sched() const { return sched_; }
    Hardware& hardware() { return hw_; }

    // SchedArch
    void ttwu_charge(Task* waker, const TtwuWork& work) override;
    void ttwu_runnable_charge(Task* waker) override;
    IpiSent send_call_function_single_ipi(int cpu, int from_cpu, const TtwuWork* work) override;
    IpiSent kick_idle_cpu(int cpu, int from_cpu, IdleKick why, const TtwuWork* work) override;
    bool smp_send_reschedule(int cpu) override;
    void context_switch(int cpu, Task* prev, Task& next) override;
    void return_to_curr(int cpu) override;
    void enter_idle(int cpu, Task* prev) override;
    Time cpu_busy_ns(int cpu) const override;
    // The time of the workload's latest op (RunControl's), a mark the busy time can be read at
    // after the run went on past it: a window that ends at its last op counts no busy time after.
    void set_mark(const Time* t) { mark_ = t ? t : &kNoMark; }
    Time cpu_busy_at_mark(int cpu) const;
    int64_t idle_exit_latency(int cpu) const override { return hw_.idle_exit_latency(cpu); }
    int this_cpu() const override { return driving_cpu_ >= 0 ? driving_cpu_ : local_cpu_; }

    // HardwareClient
    double cpu_util(int cpu) const override { return sched_.cpu_util_cfs_boost(cpu); }  // schedutil's input
    UclampPair cpu_uclamp(int cpu) const override {
        const RqClamp r = sched_.uclamp_rq(cpu);
        return {r.min, r.max};
    }
    void speed_changed(int cpu) override;

    void on_event(const Event& e) override;
    // A wake cost owed before work already under way ends in the work's event (overhead_work);
    // false: in an event of its own (a test compares).
    static inline bool join_overhead = true;

private:
    // kTimerIrq: a timer's interrupt on a CPU that was idle at the expiry, once the CPU left its state.
    // kTickIrq: the same for the tick of an idle CPU that kept its tick.
    enum EvKind : uint16_t { kSegEnd, kSwitchEnd, kIpi, kTick, kTimer, kStart, kReturnToUser, kTimerIrq, kTickIrq };
    enum class Mode : uint8_t { idle, switching, running };
    // overhead_work: the kernel time owed and then the action's work, one event for both. Nothing
    // acts at the boundary but a reschedule from elsewhere (smp_send_reschedule() splits it there);
    // past the boundary it is the work segment that would have started there (pass_boundary()).
    enum class SegKind : uint8_t { none, overhead, work, overhead_work };

    // Where a task is in its current action: on the CPU while it is current there (switched in at
    // the start of a context switch), saved by task otherwise.
    struct Context {
        int64_t work_left = 0;      // reference-ns of the current Run action still to do
        int64_t overhead_left = 0;  // kernel time owed before the next action (wake costs)
        int64_t after_first = 0;    // work_left once a joined action's first piece is done (Action::first)
        bool no_preempt = false;    // the work runs inside a system call that preempt=none/voluntary do not preempt
        bool atomic = false;        // ... or with preemption off (Action::atomic): not even preempt=lazy's tick
    };
    struct Cpu {
        const bool* need_resched = nullptr;  // the scheduler's flag for this CPU
        Task* curr = nullptr;  // the task switched to (rq->curr from the switch's start), nullptr: idle
        Context ctx;           // curr's context
        Mode mode = Mode::idle;
        uint32_t gen = 0;  // invalidates segment and switch-end events
        SegKind seg = SegKind::none;
        Time seg_start = 0;
        Time seg_boundary = 0;  // overhead_work: where the overhead ends and the work starts
        uint64_t seg_oseq = 0;  // the seq the overhead's end would have had as an event of its own
        uint64_t seg_vseq = 0;  // the work's end's place among events of its time (Engine::virtual_seq())
        double seg_speed = 1.0;
        bool tick_armed = false;
        bool ipi_in_flight = false;
        bool kick_is_ipi = false;  // the kick in flight is an IPI (ipi_wakee)
        bool kick_polled = false;  // the kick in flight is a flag the idle task polls (no interrupt)
        bool timer_kick = false;   // the kick in flight is a timer's interrupt leaving the idle state
        Time ipi_at = 0;           // when the kick in flight lands
        bool ipi_switch = false;  // an IPI's handler is switching tasks (ipi_wakee)
        Time busy_since = -1;  // start of the current busy stretch, -1 when idle
        Time busy_total = 0;
        Time mark_seen = -1;   // the mark (the latest op's time) at this CPU's last busy change
        Time busy_at_mark = 0;  // its busy time at that mark
        // Busy time up to `t`, a moment at or after the last busy change.
        Time busy_at(Time t) const { return busy_total + (busy_since >= 0 ? t - busy_since : 0); }
    };
    // Before a busy change: the busy time at the current mark, if this is the first change since it.
    void note_mark(Cpu& c) {
        const Time m = *mark_;
        if (c.mark_seen == m) return;
        c.mark_seen = m;
        c.busy_at_mark = c.busy_at(m);
    }
    static constexpr Time kNoMark = 0;
    const Time* mark_ = &kNoMark;
    Cpu& cpu_of(int cpu) { return cpus_[static_cast<size_t>(cpu)]; }
    // The context of `t`, wherever it is.
    Context& ctx_of(const Task& t) {
        if (t.cpu >= 0) {
            Cpu& c = cpu_of(t.cpu);
            if (c.curr == &t) {
                pass_boundary(c);  // what it owes from now on comes after the work under way
                return c.ctx;
            }
        }
        return saved_[static_cast<size_t>(t.id)];
    }
    int64_t jitter(int64_t ns);
    // Kernel time of a try_to_wake_up's work so far.
    int64_t cost(const TtwuWork& w) const {
        const int64_t c = w.select * prof_.select_base_ns + w.sis_probes * prof_.select_probe_ns +
                          w.queue_local * prof_.wake_local_ns + w.queue_remote * prof_.wake_remote_ns +
                          w.queue_remote_rq * (prof_.wake_remote_rq_ns - prof_.wake_remote_ns);
        return w.queue_remote && hw_.line_aware() ? c + remote_lines_cost(w) : c;
    }
    int64_t remote_lines_cost(const TtwuWork& w) const;  // the remote wake's lines beyond the LLC's
    // An IPI from `from` to `to`: ipi_latency for a pair sharing the LLC, plus its line
    // transfers' extra cost for a pair farther apart.
    int64_t ipi_ns(int from, int to) const {
        return std::max<int64_t>(0, prof_.ipi_latency_ns + prof_.ipi_lines * hw_.line_extra_ns(from, to));
    }
    // A polling idle CPU sees the flag's cache line written on `from`: one transfer.
    int64_t poll_ns(int from, int to) const {
        return std::max<int64_t>(0, prof_.poll_wake_ns + hw_.line_extra_ns(from, to));
    }
    // ipi: an IPI, not a flag or a local interrupt; polled: a flag write, no interrupt at all
    void kick_cpu(int cpu, Time delay, bool ipi, bool polled = false);
    void on_timer_irq(int cpu, int task, uint32_t cookie);
    void handle_interrupt(int cpu, bool charge, int timer_task, uint32_t cookie, bool tick = false);
    void idle_state_entered(int cpu);  // after hw_.idle_enter(): the tick stops or keeps running
    void arm_return_to_user(int cpu);  // a reschedule from elsewhere, seen at the return to user space
    int64_t ipi_send(int from);
    bool ipi_beside_timer(int cpu, int from_cpu);
    void preempt_now(int cpu);
    void run_curr(int cpu);
    void start_segment(int cpu, SegKind kind, int64_t ref_ns);
    void start_overhead_work(int cpu);
    // Before the boundary; at its nanosecond, before the overhead's end would have been handled.
    bool before_boundary(const Cpu& c) const {
        return engine_.now() < c.seg_boundary || (engine_.now() == c.seg_boundary && engine_.current_seq() < c.seg_oseq);
    }
    // An overhead_work segment whose boundary has passed becomes the work segment started there.
    void pass_boundary(Cpu& c) {
        if (c.seg != SegKind::overhead_work || before_boundary(c)) return;
        c.ctx.overhead_left = 0;
        c.seg = SegKind::work;
        c.seg_start = c.seg_boundary;
    }
    void split_at_boundary(int cpu);
    Time wall_ns(int cpu, int64_t ref_ns) const;  // how long ref_ns take at the CPU's speed now
    static int64_t seg_done(const Cpu& c, Time now);  // reference-ns of the running segment done by now
    int64_t first_piece_left(const Cpu& c) const;
    void stop_segment(int cpu);
    void arm_tick(int cpu);
    void on_tick(int cpu);
    void on_tick_irq(int cpu);
    void start_timer_kick(Cpu& c, Time lat);
    bool end_timer_kick(Cpu& c);
    inline void on_ipi(int cpu);

    Engine& engine_;
    uint16_t target_;
    Scheduler& sched_;
    Hardware& hw_;
    const MachineProfile& prof_;
    RngStream rng_costs_;
    TaskDriver* driver_ = nullptr;
    Metrics* metrics_ = nullptr;
    std::vector<Cpu> cpus_;
    std::vector<Context> saved_;  // by task id: the contexts of tasks not current on a CPU
    std::vector<int> timer_cpu_;  // by task id: the CPU whose interrupt a pending kTimerIrq is
    Task* driving_ = nullptr;     // the task whose next_action is running
    int driving_cpu_ = -1;
    // CPU whose own kernel path runs (an interrupt, schedule()): a resched_curr() of that CPU
    // takes effect on return, without an IPI (the kernel's cpu == smp_processor_id()).
    int local_cpu_ = -1;
    struct OnCpu {  // marks `cpu` as local for the scope of one call into the scheduler
        CpuExec& e;
        int saved;
        OnCpu(CpuExec& x, int cpu) : e(x), saved(x.local_cpu_) { e.local_cpu_ = cpu; }
        ~OnCpu() { e.local_cpu_ = saved; }
        OnCpu(const OnCpu&) = delete;
        OnCpu& operator=(const OnCpu&) = delete;
    };
    Time still_at_ = -1;          // the instant of the last event handled
    uint64_t still_events_ = 0;   // events handled at still_at_
};

}  // namespace wakesim
