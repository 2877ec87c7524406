// What the scheduler needs from the machine it runs on, like the kernel's arch side: send an IPI
// or wake an idle CPU, carry out a context switch, enter idle, and turn the wake path's own work
// into time that the waker pays. The scheduler decides; the machine (sim/cpu_exec) models how long
// things take and reports back through Scheduler's entry points (finish_task_switch,
// sched_ttwu_pending, sched_tick, __schedule ...).
#pragma once
#include <cstdint>

#include "engine/engine.h"
#include "kernel/task.h"

namespace wakesim {

// The work a try_to_wake_up has done so far; the machine prices it.
struct TtwuWork {
    int select = 0;        // select_task_rq_fair() calls
    int sis_probes = 0;    // CPUs looked at by select_idle_cpu()
    int queue_local = 0;   // enqueues on the waker's CPU
    int queue_remote = 0;  // enqueues on, or queueing to the wake list of, another CPU
    int queue_remote_rq = 0;  // of those, enqueued by the waker under the remote rq lock
    int this_cpu = -1;     // where try_to_wake_up runs
    int remote_cpu = -1;   // the other CPU of queue_remote
    Task* wakee = nullptr;
};

// How the machine delivered what a wake list needed.
enum class IpiSent : uint8_t {
    pending,  // an IPI to that CPU was already on its way
    ipi,      // a call-function IPI
    poll,     // the CPU polls in idle: it sees the wake list without an IPI
};

// Why an idle CPU is kicked to schedule.
enum class IdleKick : uint8_t {
    ttwu,          // ttwu_do_activate() onto an idle CPU (a reschedule IPI unless it is this CPU)
    fork,          // wake_up_new_task() onto an idle CPU
    nohz_balance,  // nohz idle balance pulled tasks to an idle CPU
};

class SchedArch {
public:
    virtual ~SchedArch() = default;

    // The cost of try_to_wake_up's own work, charged to the waker (nullptr: interrupt context,
    // nobody pays) when the wakeup is done.
    virtual void ttwu_charge(Task* waker, const TtwuWork& work) = 0;
    // ttwu_runnable(): a local wakeup's cost, charged to the waker at once.
    virtual void ttwu_runnable_charge(Task* waker) = 0;

    // send_call_function_single_ipi(): `cpu` should process its wake list (sched_ttwu_pending).
    // A wakeup from a task sends it after the work so far (`work`; nullptr: interrupt context).
    virtual IpiSent send_call_function_single_ipi(int cpu, int from_cpu, const TtwuWork* work) = 0;
    // An idle CPU got work: it leaves idle and schedules. Returns how: pending when an IPI to it
    // was already on its way (nothing more is sent), poll when its idle task polls its flags
    // (resched_curr()'s set_nr_and_not_polling(): no IPI), ipi otherwise (a local kick too).
    // `work`: as above, for IdleKick::ttwu.
    virtual IpiSent kick_idle_cpu(int cpu, int from_cpu, IdleKick why, const TtwuWork* work) = 0;
    // resched_curr() on a CPU running a task: it calls __schedule() on return from the interrupt
    // or driver code it is in, at the tick with lazy preemption, or, on another CPU, on the way
    // out of the reschedule IPI's handler. Returns whether that IPI was sent.
    virtual bool smp_send_reschedule(int cpu) = 0;

    // context_switch(): the machine switches from prev (nullptr: idle) to next and reports the
    // end of the switch through Scheduler::finish_task_switch(). Called before rq->curr changes.
    virtual void context_switch(int cpu, Task* prev, Task& next) = 0;
    // __schedule() picked the running task again: it continues.
    virtual void return_to_curr(int cpu) = 0;
    // The CPU enters idle; prev (nullptr: none) stopped running there. Called after rq->curr is
    // cleared and the idle state is updated.
    virtual void enter_idle(int cpu, Task* prev) = 0;

    // kcpustat: non-idle time of the CPU so far.
    virtual Time cpu_busy_ns(int cpu) const = 0;
    // idle_get_state(rq)->exit_latency: the exit latency of the idle state an idle CPU is in,
    // -1 when it is in none (not idle, or its idle loop has not chosen one).
    virtual int64_t idle_exit_latency(int cpu) const = 0;
    // The CPU whose kernel code runs now (a task's, or an interrupt's), -1 outside any.
    virtual int this_cpu() const = 0;
};

}  // namespace wakesim
