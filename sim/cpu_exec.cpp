#include "sim/cpu_exec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace wakesim {

namespace {

constexpr int64_t kExactInDouble = int64_t{1} << 53;  // integers below it convert to double exactly

}  // namespace

CpuExec::CpuExec(Engine& engine, Scheduler& sched, Hardware& hw, const MachineProfile& prof, uint64_t seed)
    : engine_(engine),
      target_(engine.add_target(this)),
      sched_(sched),
      hw_(hw),
      prof_(prof),
      rng_costs_(seed, "costs") {
    cpus_.resize(static_cast<size_t>(sched_.topo().nr_cpus()));
    for (size_t c = 0; c < cpus_.size(); ++c) cpus_[c].need_resched = &sched_.need_resched_flag(static_cast<int>(c));
    saved_.resize(static_cast<size_t>(sched_.nr_tasks()));
    timer_cpu_.resize(saved_.size(), -1);
    sched_.set_arch(this);
    hw_.set_client(this);
    hw_.start();
    // Every CPU is idle at the start, as since boot: in nohz.idle_cpus_mask unless its governor
    // keeps the tick (a polling state only).
    for (int c = 0; c < sched_.topo().nr_cpus(); ++c)
        if (!hw_.tick_stopped(c)) {
            sched_.nohz_tick_kept(c);
            arm_tick(c);
        }
}

int CpuExec::add_task(const TaskSpec& spec) {
    const int id = sched_.add_task(spec);
    if (saved_.size() <= static_cast<size_t>(id)) {
        saved_.resize(static_cast<size_t>(id) + 1);
        timer_cpu_.resize(saved_.size(), -1);
    }
    return id;
}

void CpuExec::start_task(int task, Time at, int parent_cpu) {
    engine_.schedule(at, target_, kStart, task, static_cast<uint32_t>(parent_cpu));
}

void CpuExec::arm_timer(int task, Time at, uint32_t cookie) { engine_.schedule(at, target_, kTimer, task, cookie); }

// Kernel-path costs vary a little from one occurrence to the next (cache misses, interrupts);
// the variation is seeded, so a seed reproduces a run exactly.
int64_t CpuExec::jitter(int64_t ns) {
    if (prof_.cost_jitter_pct <= 0 || ns <= 0) return ns;
    const double f = 1.0 + (rng_costs_.uniform01() * 2.0 - 1.0) * static_cast<double>(prof_.cost_jitter_pct) / 100.0;
    return static_cast<int64_t>(static_cast<double>(ns) * f);
}

// ---------------------------------------------------------------------------------------------
// The wake path's cost, paid by the waker.

// What a remote wake's lines cost beyond their cost within the LLC (cost() adds it).
int64_t CpuExec::remote_lines_cost(const TtwuWork& w) const {
    const int64_t remote = std::max<int64_t>(0, prof_.wake_remote_ns + prof_.wake_remote_lines * hw_.line_extra_ns(w.this_cpu, w.remote_cpu));
    return w.queue_remote * (remote - prof_.wake_remote_ns);
}

void CpuExec::ttwu_charge(Task* waker, const TtwuWork& work) {
    if (waker) ctx_of(*waker).overhead_left += jitter(cost(work));
    // The wakee's side of a remote enqueue: it pulls back what the waker wrote when it first runs.
    if (work.queue_remote_rq && work.wakee && prof_.wake_remote_rq_wakee_ns > 0)
        ctx_of(*work.wakee).overhead_left += jitter(prof_.wake_remote_rq_wakee_ns);
}

void CpuExec::ttwu_runnable_charge(Task* waker) {
    if (waker) ctx_of(*waker).overhead_left += prof_.wake_local_ns;
}

// ---------------------------------------------------------------------------------------------
// IPIs and kicks.

// The sending side of an IPI: in a guest the APIC write is a VM exit, paid by the task running on
// the sending CPU. Returns how long the IPI waits for it: all of it, or none where the send
// overlaps the delivery (a guest's exit kicks the target before it returns); 0 where the profile
// has no send cost.
int64_t CpuExec::ipi_send(int from) {
    if (prof_.ipi_send_ns <= 0 || from < 0) return 0;
    const int64_t ns = jitter(prof_.ipi_send_ns);
    Cpu& f = cpu_of(from);
    pass_boundary(f);
    if (f.curr) f.ctx.overhead_left += ns;
    return prof_.ipi_send_overlaps ? 0 : ns;
}

// Sends the IPI (or wake of a polling/halted CPU) that makes `cpu` process its wake list and
// schedule, unless one is already on its way.
void CpuExec::kick_cpu(int cpu, Time delay, bool ipi, bool polled) {
    Cpu& c = cpu_of(cpu);
    if (c.ipi_in_flight) return;
    c.ipi_in_flight = true;
    c.kick_is_ipi = ipi;
    c.kick_polled = polled;
    c.ipi_at = engine_.now() + delay;
    engine_.schedule(c.ipi_at, target_, kIpi, cpu);
}

// resched_curr() from another CPU sets the flag at once and sends the IPI; a task in the first
// piece of joined work returns to user space first if that comes sooner, and is preempted there
// (exit_to_user_mode_loop()), as it was when the pieces were segments of their own.
void CpuExec::arm_return_to_user(int cpu) {
    Cpu& c = cpu_of(cpu);
    pass_boundary(c);
    const Context& x = c.ctx;
    if (c.seg != SegKind::work || x.no_preempt || x.work_left <= x.after_first) return;
    const int64_t rem = first_piece_left(c);
    if (rem <= 0) return;
    const Time at = engine_.now() + wall_ns(cpu, rem);
    if (at < c.ipi_at) engine_.schedule(at, target_, kReturnToUser, cpu, static_cast<uint32_t>(c.curr->id));
}

// A timer's interrupt is bringing `cpu` out of an idle state that does not poll (HLT): the
// waker finds the wake list empty (llist_add() returns true) or the idle task not polling
// (set_nr_and_not_polling()), so it sends its IPI, which reaches a CPU already on its way out.
// The waker pays the send; the task the interrupt switches in pays the receive (on_timer_irq).
bool CpuExec::ipi_beside_timer(int cpu, int from_cpu) {
    Cpu& c = cpu_of(cpu);
    if (!c.timer_kick || c.kick_is_ipi || from_cpu == cpu || hw_.polling(cpu)) return false;
    ipi_send(from_cpu);
    c.kick_is_ipi = true;
    return true;
}

IpiSent CpuExec::send_call_function_single_ipi(int cpu, int from_cpu, const TtwuWork* work) {
    Cpu& c = cpu_of(cpu);
    if (c.ipi_in_flight) return ipi_beside_timer(cpu, from_cpu) ? IpiSent::ipi : IpiSent::pending;
    const bool idle = c.mode == Mode::idle;
    Time delay;
    IpiSent sent;
    Time send = 0;
    if (idle && hw_.polling(cpu)) {
        delay = poll_ns(from_cpu, cpu) + hw_.wake_latency(cpu);
        sent = IpiSent::poll;
    } else {
        send = ipi_send(from_cpu);
        delay = ipi_ns(from_cpu, cpu) + (idle ? hw_.wake_latency(cpu) : 0);
        sent = IpiSent::ipi;
    }
    // The IPI leaves at the end of the waker's try_to_wake_up so far (selection + queueing).
    kick_cpu(cpu, send + jitter((work ? cost(*work) : 0) + delay), sent == IpiSent::ipi, sent == IpiSent::poll);
    return sent;
}

IpiSent CpuExec::kick_idle_cpu(int cpu, int from_cpu, IdleKick why, const TtwuWork* work) {
    if (cpu_of(cpu).ipi_in_flight) return ipi_beside_timer(cpu, from_cpu) ? IpiSent::ipi : IpiSent::pending;
    Time delay = 0;
    const bool local = cpu == from_cpu;  // this CPU's own interrupt
    // resched_curr()'s set_nr_and_not_polling() and send_call_function_single_ipi()'s
    // set_nr_if_polling(): a CPU whose idle task polls its flags sees the write, no IPI.
    const bool polled = !local && hw_.polling(cpu);
    const int64_t signal = polled ? poll_ns(from_cpu, cpu) : ipi_send(from_cpu) + ipi_ns(from_cpu, cpu);
    switch (why) {
        case IdleKick::ttwu: delay = local ? 0 : (work ? cost(*work) : 0) + signal + hw_.wake_latency(cpu); break;
        case IdleKick::fork: delay = local ? 0 : signal + hw_.wake_latency(cpu); break;
        case IdleKick::nohz_balance: delay = signal + hw_.wake_latency(cpu); break;
    }
    kick_cpu(cpu, delay, !local && !polled, polled);
    return polled ? IpiSent::poll : IpiSent::ipi;
}

// resched_curr() of a running CPU: on this CPU (the driver's, or the interrupt handler's) the flag
// is acted on when the caller returns; lazy preemption waits for the tick; another CPU is sent
// the reschedule IPI and preempts on the way out of its handler (on_ipi).
bool CpuExec::smp_send_reschedule(int cpu) {
    Cpu& c = cpu_of(cpu);
    if (c.mode != Mode::running || driving_cpu_ == cpu || local_cpu_ == cpu || prof_.preempt_lazy) return false;
    split_at_boundary(cpu);  // the flag is seen where the overhead ends, as at a segment's end
    if (c.ipi_in_flight) {  // the IPI on its way makes it look at need_resched
        arm_return_to_user(cpu);
        return false;
    }
    const int from = driving_cpu_ >= 0 ? driving_cpu_ : local_cpu_;
    const int64_t send = ipi_send(from);
    kick_cpu(cpu, send + jitter(ipi_ns(from, cpu)), true);
    arm_return_to_user(cpu);
    return true;
}

inline void CpuExec::on_ipi(int cpu) {
    Cpu& c = cpu_of(cpu);
    c.ipi_in_flight = false;
    // The task this IPI switches in, if any, pays ipi_wakee (context_switch() reads the flag).
    const bool charge = c.kick_is_ipi && prof_.ipi_wakee_ns > 0;
    if (c.mode == Mode::running && c.seg != SegKind::none) {
        // The interrupt steals time from the running task; a preemption it causes takes effect on
        // the way out of the handler.
        stop_segment(cpu);
        c.ctx.overhead_left += prof_.ipi_handler_ns;
        {
            const OnCpu local(*this, cpu);
            sched_.sched_ttwu_pending(cpu);
        }
        if (*c.need_resched && !prof_.preempt_lazy && !c.ctx.no_preempt) {
            c.ipi_switch = charge;
            preempt_now(cpu);
            c.ipi_switch = false;
            return;
        }
        run_curr(cpu);
        return;
    }
    handle_interrupt(cpu, charge, -1, 0);
}

// An interrupt's handler (or a polled kick's idle-loop pass) on a CPU not running a task: the
// wake list, and a timer's sleeper if `timer_task` >= 0. On an idle CPU the idle exit is recorded
// before the handler, or after it where the state waits with interrupts enabled and an interrupt
// woke it (HLT: the handler runs inside default_idle()); then the CPU runs what is queued or,
// with nothing to run, enters a state again (do_idle(): the governor selects once more).
void CpuExec::handle_interrupt(int cpu, bool charge, int timer_task, uint32_t cookie, bool tick) {
    Cpu& c = cpu_of(cpu);
    const OnCpu local(*this, cpu);
    const bool was_idle = c.mode == Mode::idle;
    const bool handler_inside = was_idle && !c.kick_polled && hw_.idle_irq_enabled(cpu);
    if (was_idle && !handler_inside) hw_.idle_exit(cpu, tick);
    if (timer_task >= 0) driver_->on_timer(timer_task, cookie);
    if (tick) sched_.sched_tick_idle(cpu);
    sched_.sched_ttwu_pending(cpu);
    if (handler_inside) hw_.idle_exit(cpu, tick);
    if (c.mode == Mode::idle && sched_.nr_running(cpu) > 0) {
        c.ipi_switch = charge;
        sched_.schedule(cpu);
        c.ipi_switch = false;
    } else if (was_idle && c.mode == Mode::idle && !c.ipi_in_flight) {
        hw_.idle_enter(cpu);
        idle_state_entered(cpu);
    }
}

// tick_nohz_idle_stop_tick(): a CPU whose governor lets the tick stop joins the nohz balance's
// idle CPUs; one that keeps it takes its ticks while idle (on_tick()).
void CpuExec::idle_state_entered(int cpu) {
    if (hw_.tick_stopped(cpu))
        sched_.nohz_balance_enter_idle(cpu);
    else
        arm_tick(cpu);
}

// A timer's interrupt on `cpu`: hrtimer_wakeup() wakes the sleeper. On an idle CPU it is the
// kick that brought the CPU out of its state (kTimer), or rides on one.
// A timer's (or the tick's) interrupt brings an idle CPU out of its state after `lat`: until then
// it is the kick in flight, on which wakeups ride.
void CpuExec::start_timer_kick(Cpu& c, Time lat) {
    c.ipi_in_flight = c.timer_kick = true;
    c.kick_is_ipi = c.kick_polled = false;
    c.ipi_at = engine_.now() + lat;
}

// A timer's (or the tick's) interrupt that is the kick in flight ends it. Returns whether the task
// it switches in pays ipi_wakee: a waker's IPI reached the CPU on its way out (ipi_beside_timer).
bool CpuExec::end_timer_kick(Cpu& c) {
    const bool charge = c.kick_is_ipi && prof_.ipi_wakee_ns > 0;
    c.timer_kick = c.kick_is_ipi = false;
    c.ipi_in_flight = false;
    return charge;
}

void CpuExec::on_timer_irq(int cpu, int task, uint32_t cookie) {
    Cpu& c = cpu_of(cpu);
    const bool charge = c.timer_kick && end_timer_kick(c);  // this interrupt is the kick in flight
    if (c.mode == Mode::idle) {
        handle_interrupt(cpu, charge, task, cookie);
        return;
    }
    pass_boundary(c);
    {
        const OnCpu local(*this, cpu);
        driver_->on_timer(task, cookie);
    }
    if (c.mode == Mode::running && *c.need_resched && !prof_.preempt_lazy && !c.ctx.no_preempt) preempt_now(cpu);
}

// ---------------------------------------------------------------------------------------------
// Context switches and idle.

void CpuExec::context_switch(int cpu, Task* prev, Task& next) {
    Cpu& c = cpu_of(cpu);
    if (prev) saved_[static_cast<size_t>(prev->id)] = c.ctx;
    c.curr = &next;
    c.ctx = saved_[static_cast<size_t>(next.id)];
    if (c.ipi_switch) {
        c.ctx.overhead_left += jitter(prof_.ipi_wakee_ns);
        c.ipi_switch = false;
    }
    if (prev) {
        hw_.switch_out(prev->cache, cpu);
    } else {
        note_mark(c);
        c.busy_since = engine_.now();
        hw_.idle_exit(cpu);
        hw_.set_busy(cpu, true);
        arm_tick(cpu);
    }
    c.mode = Mode::switching;
    c.seg = SegKind::none;
    const Time cost = jitter(prev ? prof_.ctx_switch_ns : prof_.idle_switch_ns);
    engine_.schedule(engine_.now() + cost, target_, kSwitchEnd, cpu, ++c.gen);
    if (prev) driver_->switched_out(*prev);
}

void CpuExec::return_to_curr(int cpu) {
    cpu_of(cpu).mode = Mode::running;
    run_curr(cpu);
}

void CpuExec::enter_idle(int cpu, Task* prev) {
    Cpu& c = cpu_of(cpu);
    if (prev) hw_.switch_out(prev->cache, cpu);
    if (c.busy_since >= 0) {
        note_mark(c);
        c.busy_total += engine_.now() - c.busy_since;
        c.busy_since = -1;
    }
    if (prev) saved_[static_cast<size_t>(prev->id)] = c.ctx;
    c.curr = nullptr;
    c.mode = Mode::idle;
    c.seg = SegKind::none;
    ++c.gen;
    if (prev) {
        hw_.set_busy(cpu, false);
        hw_.idle_enter(cpu);
        idle_state_entered(cpu);
        driver_->switched_out(*prev);
    }
}

Time CpuExec::cpu_busy_ns(int cpu) const {
    return cpus_[static_cast<size_t>(cpu)].busy_at(engine_.now());
}

Time CpuExec::cpu_busy_at_mark(int cpu) const {
    const Cpu& c = cpus_[static_cast<size_t>(cpu)];
    if (c.mark_seen == *mark_) return c.busy_at_mark;
    return c.busy_at(*mark_);  // no change since the mark
}

// ---------------------------------------------------------------------------------------------
// Running tasks: segments of work or overhead, the driver's actions.

// A frequency or SMT change: the running segment continues at the new speed.
void CpuExec::speed_changed(int cpu) {
    Cpu& c = cpu_of(cpu);
    if (c.mode != Mode::running || c.seg == SegKind::none) return;
    pass_boundary(c);
    const SegKind kind = c.seg;
    stop_segment(cpu);
    const Context& x = c.ctx;
    if (kind == SegKind::overhead_work)
        start_overhead_work(cpu);
    else
        start_segment(cpu, kind, kind == SegKind::overhead ? x.overhead_left : x.work_left);
}

inline Time CpuExec::wall_ns(int cpu, int64_t ref_ns) const {
    const double s = hw_.speed(cpu);
    // At full speed the wall time is the work itself (what ceil(ref_ns / 1.0) gives, without it).
    Time wall = ref_ns;
    if (s != 1.0 || ref_ns >= kExactInDouble) {
        // ceil() of a positive quotient without libm's call (x86-64's baseline has no roundsd)
        const double q = static_cast<double>(ref_ns) / s;
        wall = static_cast<Time>(q);
        if (static_cast<double>(wall) < q) ++wall;
    }
    return std::max<Time>(wall, 1);
}

void CpuExec::start_segment(int cpu, SegKind kind, int64_t ref_ns) {
    Cpu& c = cpu_of(cpu);
    c.seg = kind;
    c.seg_start = engine_.now();
    c.seg_speed = hw_.speed(cpu);
    engine_.schedule(engine_.now() + wall_ns(cpu, ref_ns), target_, kSegEnd, cpu, ++c.gen);
}

// The overhead's segment and the work's that would start at its end, timed as the two would be.
void CpuExec::start_overhead_work(int cpu) {
    Cpu& c = cpu_of(cpu);
    c.seg = SegKind::overhead_work;
    c.seg_start = engine_.now();
    c.seg_speed = hw_.speed(cpu);
    c.seg_boundary = engine_.now() + wall_ns(cpu, c.ctx.overhead_left);
    // Among events of equal time both ends keep the places the two segments' ends would have.
    c.seg_oseq = engine_.next_seq();
    c.seg_vseq = engine_.virtual_seq(c.seg_boundary);
    engine_.schedule_as_of(c.seg_boundary + wall_ns(cpu, c.ctx.work_left), c.seg_vseq, target_, kSegEnd, cpu, ++c.gen);
}

// A reschedule from elsewhere during the overhead: the overhead's own segment ends at the boundary.
void CpuExec::split_at_boundary(int cpu) {
    Cpu& c = cpu_of(cpu);
    pass_boundary(c);
    if (c.seg != SegKind::overhead_work) return;
    c.seg = SegKind::overhead;
    engine_.schedule_as_of(c.seg_boundary, c.seg_oseq, target_, kSegEnd, cpu, ++c.gen);
}

inline int64_t CpuExec::seg_done(const Cpu& c, Time now) {
    const Time ran = now - c.seg_start;
    return c.seg_speed == 1.0 && ran < kExactInDouble ? ran : static_cast<int64_t>(static_cast<double>(ran) * c.seg_speed);
}

// Reference-ns of a joined action's first piece still to run in the work segment (<= 0: done).
inline int64_t CpuExec::first_piece_left(const Cpu& c) const {
    return c.ctx.work_left - seg_done(c, engine_.now()) - c.ctx.after_first;
}

void CpuExec::stop_segment(int cpu) {
    Cpu& c = cpu_of(cpu);
    if (c.seg == SegKind::none) return;
    pass_boundary(c);
    Context& x = c.ctx;
    const int64_t done = seg_done(c, engine_.now());
    int64_t& left = c.seg == SegKind::work ? x.work_left : x.overhead_left;
    left = std::max<int64_t>(0, left - done);
    c.seg = SegKind::none;
    ++c.gen;
}

bool CpuExec::take_back_work(int task, int64_t ns) {
    const Task& t = sched_.task(task);
    Context& x = ctx_of(t);
    const int cpu = t.cpu;
    if (cpu >= 0 && cpu_of(cpu).curr == &t && cpu_of(cpu).seg == SegKind::overhead_work) {
        // Still in the overhead (ctx_of() passed a boundary behind): the work to come is shorter.
        if (x.work_left <= ns) return false;
        x.work_left -= ns;
        Cpu& c = cpu_of(cpu);
        engine_.schedule_as_of(c.seg_boundary + wall_ns(cpu, x.work_left), c.seg_vseq, target_, kSegEnd, cpu, ++c.gen);
        return true;
    }
    const bool in_work = cpu >= 0 && cpu_of(cpu).curr == &t && cpu_of(cpu).mode == Mode::running &&
                         cpu_of(cpu).seg == SegKind::work;
    const int64_t left = in_work ? x.work_left - seg_done(cpu_of(cpu), engine_.now()) : x.work_left;
    if (left <= ns) return false;
    if (in_work) {
        stop_segment(cpu);
        x.work_left -= ns;
        start_segment(cpu, SegKind::work, x.work_left);
    } else {
        x.work_left -= ns;
    }
    return true;
}

void CpuExec::preempt_now(int cpu) {
    if (cpu_of(cpu).mode != Mode::running) return;
    stop_segment(cpu);
    const OnCpu local(*this, cpu);
    sched_.schedule(cpu);
}

void CpuExec::run_curr(int cpu) {
    Cpu& c = cpu_of(cpu);
    for (int guard = 0;; ++guard) {
        Task* t = c.curr;
        Context& x = c.ctx;
        if (x.overhead_left > 0) {
            // Work already under way follows in the same event, unless the overhead's end would
            // preempt (a flag this CPU's own tick or handler set while it could not act on it).
            if (join_overhead && x.work_left > 0 && !t->block_pending && !(*c.need_resched && !prof_.preempt_lazy && !x.no_preempt))
                start_overhead_work(cpu);
            else
                start_segment(cpu, SegKind::overhead, x.overhead_left);
            return;
        }
        if (t->block_pending) {
            const OnCpu local(*this, cpu);
            sched_.schedule_blocked(cpu);
            return;
        }
        if (x.work_left > 0) {
            start_segment(cpu, SegKind::work, x.work_left);
            return;
        }
        if (guard > 1000000)
            throw TimeStandsStill(engine_.now(), "a task took 1000000 steps without time passing");
        driving_ = t;
        driving_cpu_ = cpu;
        const Action a = driver_->next_action(*t);
        driving_ = nullptr;
        driving_cpu_ = -1;
        switch (a.kind) {
            case Action::run:
                x.work_left = std::max<int64_t>(0, a.ns);
                x.after_first = x.work_left - a.first;
                x.atomic = a.atomic;
                x.no_preempt = a.atomic || (a.in_syscall && !prof_.preempt_full);
                break;
            case Action::block:
                t->block_pending = true;  // set_current_state(TASK_INTERRUPTIBLE); schedule() after the overhead
                x.atomic = false;
                x.no_preempt = a.in_syscall && !prof_.preempt_full;
                break;
            case Action::exit: {
                const OnCpu local(*this, cpu);
                sched_.do_task_dead(cpu);
                return;
            }
        }
        // A wakeup issued by the driver preempts this task, unless the task stays inside the
        // system call under preempt=none/voluntary: going on in it, or going to sleep in it
        // (schedule() then switches anyway, with the task off the runqueue).
        if (*c.need_resched && !x.no_preempt) {
            c.mode = Mode::running;
            preempt_now(cpu);
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The tick and the event loop.

void CpuExec::arm_tick(int cpu) {
    Cpu& c = cpu_of(cpu);
    if (c.tick_armed) return;
    c.tick_armed = true;
    const Time tick = sched_.tick_ns();
    engine_.schedule((engine_.now() / tick + 1) * tick, target_, kTick, cpu);
}

void CpuExec::on_tick(int cpu) {
    Cpu& c = cpu_of(cpu);
    c.tick_armed = false;
    if (c.mode == Mode::idle) {
        // NOHZ: a CPU whose governor stopped the tick takes none. A kept tick is an interrupt
        // that brings the CPU out of its state, unless one is already doing so (the CPU arms
        // its tick again when it runs a task or re-enters idle).
        if (hw_.tick_stopped(cpu) || c.ipi_in_flight) return;
        start_timer_kick(c, hw_.irq_latency(cpu));
        engine_.schedule(c.ipi_at, target_, kTickIrq, cpu);
        return;
    }
    {
        const OnCpu local(*this, cpu);  // the tick interrupt: its own resched_curr() acts on return
        sched_.sched_tick(cpu);
    }
    // Inside a system call only preempt=lazy's tick (its lazy flag made urgent) preempts.
    if (*c.need_resched && c.mode == Mode::running && (!c.ctx.no_preempt || (prof_.preempt_lazy && !c.ctx.atomic))) preempt_now(cpu);
    if (c.mode != Mode::idle) arm_tick(cpu);
}

// The kept tick's interrupt on an idle CPU, once it left its state: sched_tick() of the idle
// runqueue, the wakeups that rode on the exit, then a task or the idle loop again.
void CpuExec::on_tick_irq(int cpu) {
    Cpu& c = cpu_of(cpu);
    if (!c.timer_kick) return;  // a timer's interrupt at the same exit took it
    const bool charge = end_timer_kick(c);
    if (c.mode == Mode::idle) handle_interrupt(cpu, charge, -1, 0, true);
}

void CpuExec::on_event(const Event& e) {
    // Every segment takes at least 1 ns, so only costs of 0 ns let events pile up at one instant;
    // far more than any workload's burst (at most 100000 tasks) means the clock stopped.
    constexpr uint64_t kMaxEventsAtOneInstant = 10'000'000;
    if (engine_.now() != still_at_) {
        still_at_ = engine_.now();
        still_events_ = 0;
    } else if (++still_events_ > kMaxEventsAtOneInstant) {
        throw TimeStandsStill(engine_.now(), std::to_string(kMaxEventsAtOneInstant) + " events without time passing");
    }
    const int cpu = e.a;
    switch (e.kind) {
        case kSegEnd: {
            Cpu& c = cpu_of(cpu);
            if (e.b != c.gen || c.mode != Mode::running) return;
            Context& x = c.ctx;
            if (c.seg != SegKind::work) x.overhead_left = 0;
            if (c.seg != SegKind::overhead) x.work_left = 0;
            c.seg = SegKind::none;
            if (*c.need_resched && !prof_.preempt_lazy && !x.no_preempt) {
                preempt_now(cpu);
                return;
            }
            run_curr(cpu);
            return;
        }
        case kSwitchEnd: {
            Cpu& c = cpu_of(cpu);
            if (e.b != c.gen || c.mode != Mode::switching) return;
            c.mode = Mode::running;
            c.ctx.overhead_left += hw_.switch_in(c.curr->cache, cpu);
            {
                const OnCpu local(*this, cpu);
                sched_.finish_task_switch(cpu);
                if (*c.need_resched) {
                    sched_.schedule(cpu);
                    return;
                }
            }
            run_curr(cpu);
            return;
        }
        case kIpi:
            on_ipi(cpu);
            return;
        case kTick:
            on_tick(cpu);
            return;
        case kTimer: {
            const Task& t = sched_.task(e.a);
            const int tcpu = t.cpu >= 0 ? t.cpu : 0;
            Cpu& c = cpu_of(tcpu);
            // hrtimer_wakeup() runs in the interrupt of the CPU that armed the timer: the
            // sleeper's own (it was running there, so get_nohz_timer_target() kept the timer).
            // An idle CPU takes the interrupt once it has left its state (or, during the idle
            // loop's entry, when the entry ends); until then it is idle, and a wakeup sent to it
            // meanwhile rides on this exit as on a kick in flight. The interrupt stays this CPU's
            // even if the sleeper is woken elsewhere meanwhile.
            if (c.mode == Mode::idle) {
                const Time lat = c.ipi_in_flight ? 0 : hw_.irq_latency(tcpu);
                if (c.ipi_in_flight || lat > 0) {
                    if (!c.ipi_in_flight) start_timer_kick(c, lat);  // this interrupt brings the CPU out of its state
                    timer_cpu_[static_cast<size_t>(e.a)] = tcpu;
                    engine_.schedule(c.ipi_at, target_, kTimerIrq, e.a, e.b);
                    return;
                }
            }
            on_timer_irq(tcpu, e.a, e.b);
            return;
        }
        case kTimerIrq:
            on_timer_irq(timer_cpu_[static_cast<size_t>(e.a)], e.a, e.b);
            return;
        case kTickIrq:
            on_tick_irq(cpu);
            return;
        case kReturnToUser: {
            Cpu& c = cpu_of(cpu);
            pass_boundary(c);
            if (c.mode != Mode::running || c.curr == nullptr || c.curr->id != static_cast<int>(e.b) || !*c.need_resched ||
                c.ctx.no_preempt || c.seg != SegKind::work)
                return;
            const int64_t rem = first_piece_left(c);
            if (rem > 0) {  // the clock slowed since: not there yet
                engine_.schedule(engine_.now() + wall_ns(cpu, rem), target_, kReturnToUser, cpu, e.b);
                return;
            }
            preempt_now(cpu);
            return;
        }
        case kStart:
            if (saved_.size() < static_cast<size_t>(sched_.nr_tasks())) saved_.resize(static_cast<size_t>(sched_.nr_tasks()));
            sched_.wake_up_new_task(e.a, static_cast<int>(e.b));
            return;
        default:
            return;
    }
}

}  // namespace wakesim
