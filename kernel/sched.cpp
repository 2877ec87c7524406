#include "kernel/sched.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/trace.h"
#include "kernel/wake_explain.h"

namespace wakesim {

namespace {

__extension__ typedef __int128 i128;  // weighted vruntime sums overflow 64 bits

// kernel/sched/core.c sched_prio_to_weight[], nice -20..19.
constexpr uint32_t kPrioToWeight[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
    1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
    110,   87,    70,    56,    45,    36,    29,    23,    18,    15,
};
constexpr uint32_t kWeightIdlePrio = 3;  // SCHED_IDLE

// Weight of the entities that count as runnable for load (delayed-dequeue sleepers do not).
double runnable_weight_of(const std::vector<Task*>& queue) {
    double w = 0;
    for (const Task* t : queue)
        if (!t->sched_delayed) w += t->weight;
    return w;
}

int ilog2(int v) {
    int r = 0;
    while (v >>= 1) ++r;
    return r;
}

std::string cpu_str(int c) { return c < 0 ? std::string("none") : "cpu" + std::to_string(c); }

}  // namespace

Scheduler::Scheduler(Engine& engine, const Topology& topo, const SchedDomains& sd,
                     const MachineProfile& prof, PolicyRun& policy, SchedConfig cfg, Metrics& metrics,
                     uint64_t seed)
    : engine_(engine),
      target_(engine.add_target(this)),
      topo_(topo),
      sd_(sd),
      prof_(prof),
      policy_(policy),
      cfg_(std::move(cfg)),
      m_(metrics),
      rng_balance_(seed, "balance"),
      rng_costs_(seed, "costs") {
    const int n = topo_.nr_cpus();
    rqs_.resize(static_cast<size_t>(n));
    llc_.resize(static_cast<size_t>(n));
    // sysctl_sched_base_slice scales with 1 + ilog2(min(ncpus, 8)) (SCHED_TUNABLESCALING_LOG).
    slice_ns_ = cfg_.base_slice_ns * (1 + ilog2(std::min(n, 8)));
    tick_ns_ = kNsPerSec / std::max<int64_t>(1, prof_.tick_hz);
    for (int c = 0; c < n; ++c) {
        Rq& rq = rqs_[static_cast<size_t>(c)];
        const auto& dom = sd_.of(c);
        rq.dom.resize(dom.levels.size());
        for (size_t i = 0; i < dom.levels.size(); ++i) {
            rq.dom[i].balance_interval_ms = dom.levels[i].min_interval_ms;
        }
        rq.avg_idle = 2 * cfg_.migration_cost_ns;
        rq.max_idle_balance_cost = cfg_.migration_cost_ns;
        idle_mask_.set(c);
        LlcShared& sh = llc_[static_cast<size_t>(dom.sd_llc_id)];
        // After boot every core has been idle once, so the hint is set on SMT machines.
        sh.has_idle_cores = sd_.smt_active();
        sh.nr_idle_scan = cfg_.start_sis_scan_full ? dom.sd_llc_size : 0;
    }
    hw_ = std::make_unique<Hardware>(engine_, topo_, prof_);
    hw_->set_client(this);
    hw_->start();
}

Scheduler::~Scheduler() = default;

// Kernel-path costs vary a little from one occurrence to the next (cache misses, interrupts);
// the variation is seeded, so a seed reproduces a run exactly.
int64_t Scheduler::jitter(int64_t ns) {
    if (prof_.cost_jitter_pct <= 0 || ns <= 0) return ns;
    const double f = 1.0 + (rng_costs_.uniform01() * 2.0 - 1.0) * static_cast<double>(prof_.cost_jitter_pct) / 100.0;
    return static_cast<int64_t>(static_cast<double>(ns) * f);
}

int Scheduler::add_task(const TaskSpec& spec) {
    Task& t = tasks_.emplace_back();
    t.id = static_cast<int>(tasks_.size() - 1);
    t.comm = spec.comm.empty() ? "task" + std::to_string(t.id) : spec.comm;
    for (auto& ch : t.comm)
        if (ch == ' ') ch = '_';
    t.allowed = spec.allowed.empty() ? topo_.all() : (spec.allowed & topo_.all());
    if (t.allowed.empty()) throw std::invalid_argument("task " + t.comm + " has no allowed CPU on this machine");
    t.nr_cpus_allowed = t.allowed.count();
    t.nice = std::clamp(spec.nice, -20, 19);
    t.policy = spec.policy;
    t.role = spec.role;
    t.pair_id = spec.pair_id;
    t.per_cpu_kthread = spec.per_cpu_kthread;
    policy_.on_task_created(t);
    t.weight = t.policy == SchedPolicy::idle ? kWeightIdlePrio : kPrioToWeight[t.nice + 20];
    t.slice = slice_ns_;
    t.footprint_kib = spec.footprint_kib;
    return t.id;
}

void Scheduler::start_task(int task, Time at, int parent_cpu) {
    engine_.schedule(at, target_, kStart, task, static_cast<uint32_t>(parent_cpu));
}

// ---------------------------------------------------------------------------------------------
// PELT (kernel/sched/pelt.c), continuous-time form: y^32 = 1/2 over 1024 us periods.

double Scheduler::decay(Time dt) {
    if (dt <= 0) return 1.0;
    return std::exp2(-static_cast<double>(dt) / (32.0 * 1024.0 * 1000.0));
}

double Scheduler::speed(int cpu) const { return hw_->speed(cpu); }

// A frequency or SMT change: the running segment continues at the new speed.
void Scheduler::speed_changed(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    if (rq.mode != Mode::running || rq.seg == SegKind::none) return;
    const SegKind kind = rq.seg;
    stop_segment(cpu);
    start_segment(cpu, kind, kind == SegKind::overhead ? rq.curr->overhead_left : rq.curr->work_left);
}

void Scheduler::pelt_update_task(Task& t, bool running, bool runnable) {
    const Time now = engine_.now();
    const double d = decay(now - t.pelt.last_update);
    const double spd = t.cpu >= 0 ? hw_->invariant_speed(t.cpu) : 1.0;
    t.pelt.util_avg = t.pelt.util_avg * d + (running ? 1024.0 * spd * (1.0 - d) : 0.0);
    t.pelt.load_avg = t.pelt.load_avg * d + (runnable ? t.weight * (1.0 - d) : 0.0);
    t.pelt.last_update = now;
}

void Scheduler::pelt_update_cpu(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    const Time now = engine_.now();
    const double d = decay(now - rq.pelt.last_update);
    const double runnable_weight = runnable_weight_of(rq.queue);
    const bool busy = rq.curr != nullptr;
    rq.pelt.util_avg = rq.pelt.util_avg * d + (busy ? 1024.0 * hw_->invariant_speed(cpu) * (1.0 - d) : 0.0);
    rq.pelt.load_avg = rq.pelt.load_avg * d + runnable_weight * (1.0 - d);
    rq.pelt.last_update = now;
}

double Scheduler::cpu_util(int cpu) const {
    const Rq& rq = rqs_[static_cast<size_t>(cpu)];
    const double d = decay(engine_.now() - rq.pelt.last_update);
    double u = rq.pelt.util_avg * d + (rq.curr ? 1024.0 * hw_->invariant_speed(cpu) * (1.0 - d) : 0.0);
    return std::min<double>(u, capacity_of(cpu));
}

double Scheduler::cpu_load(int cpu) const {
    const Rq& rq = rqs_[static_cast<size_t>(cpu)];
    const double d = decay(engine_.now() - rq.pelt.last_update);
    return rq.pelt.load_avg * d + runnable_weight_of(rq.queue) * (1.0 - d);
}

double Scheduler::task_util(const Task& t) const {
    const double d = decay(engine_.now() - t.pelt.last_update);
    const bool running = t.state == TaskState::running;
    double u = t.pelt.util_avg * d + (running ? 1024.0 * (1.0 - d) : 0.0);
    return cfg_.features.on(Feat::UTIL_EST) ? std::max(u, t.pelt.util_est) : u;
}

// task_h_load() without cgroups: a sleeping wakee's load as last updated (when it went to sleep);
// the wake path does not sync it before wake_affine_weight().
double Scheduler::task_load(const Task& t) const {
    if (t.state == TaskState::sleeping || t.state == TaskState::waking) return t.pelt.load_avg;
    const double d = decay(engine_.now() - t.pelt.last_update);
    const bool runnable = t.state == TaskState::running || t.state == TaskState::runnable;
    return t.pelt.load_avg * d + (runnable ? t.weight * (1.0 - d) : 0.0);
}

// util_fits_cpu() without uclamp: fits_capacity(util, capacity) = util < 80% of capacity.
bool Scheduler::task_fits_cpu(const Task& t, int cpu) const {
    return task_util(t) * 1280.0 < capacity_of(cpu) * 1024.0;
}

bool Scheduler::has_idle_cores(int cpu) const {
    return llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)].has_idle_cores;
}
int Scheduler::nr_idle_scan(int cpu) const {
    return llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)].nr_idle_scan;
}
void Scheduler::set_nr_idle_scan(int cpu, int v) {
    llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)].nr_idle_scan = v;
}
void Scheduler::set_has_idle_cores(int cpu, bool v) {
    llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)].has_idle_cores = v;
}

Time Scheduler::cpu_busy_ns(int cpu) const {
    const Rq& rq = rqs_[static_cast<size_t>(cpu)];
    return rq.busy_total + (rq.busy_since >= 0 ? engine_.now() - rq.busy_since : 0);
}

// ---------------------------------------------------------------------------------------------
// EEVDF runqueue (kernel/sched/fair.c: avg_vruntime, entity_eligible, place_entity, pick_eevdf).

namespace {

// The weighted vruntime sum of a runqueue, relative to its first entity (avg_vruntime()).
struct VSum {
    int64_t base = 0;
    i128 sum = 0;
    int64_t w = 0;
    // vruntime <= V  <=>  (v - base) * W <= sum(w_i (v_i - base))
    bool eligible(const Task& t) const { return w == 0 || static_cast<i128>(t.vruntime - base) * w <= sum; }
    int64_t avg() const { return w == 0 ? base : base + static_cast<int64_t>(sum / w); }
};

VSum vsum(const std::vector<Task*>& queue) {
    VSum v;
    if (queue.empty()) return v;
    v.base = queue.front()->vruntime;
    for (const Task* t : queue) {
        v.sum += static_cast<i128>(t->vruntime - v.base) * t->weight;
        v.w += t->weight;
    }
    return v;
}

}  // namespace

int64_t Scheduler::avg_vruntime(const Rq& rq) const { return rq.queue.empty() ? 0 : vsum(rq.queue).avg(); }

bool Scheduler::entity_eligible(const Rq& rq, const Task& t) const { return vsum(rq.queue).eligible(t); }

Task* Scheduler::pick_eevdf(Rq& rq, bool protect) {
    if (rq.queue.empty()) return nullptr;
    if (rq.queue.size() == 1) return rq.queue.front();
    const VSum v = vsum(rq.queue);
    auto eligible = [&](const Task* e) { return v.eligible(*e); };
    Task* curr = rq.curr;
    if (curr && !(curr->on_rq && curr->state != TaskState::sleeping && eligible(curr))) curr = nullptr;
    if (curr && protect && curr->vruntime < curr->vprot) return curr;
    Task* best = nullptr;
    for (Task* e : rq.queue)
        if (eligible(e) && (!best || e->deadline < best->deadline)) best = e;
    if (!best)  // rounding can leave none eligible: take the smallest vruntime
        for (Task* e : rq.queue)
            if (!best || e->vruntime < best->vruntime) best = e;
    if (curr && curr->deadline < best->deadline) best = curr;
    return best;
}

void Scheduler::place_entity(Rq& rq, Task& t, bool initial) {
    int64_t vslice = calc_delta_fair(t.slice, t);
    int64_t V = rq.queue.empty() ? t.vruntime : avg_vruntime(rq);
    int64_t lag = 0;
    if (cfg_.features.on(Feat::PLACE_LAG) && !rq.queue.empty()) {
        int64_t W = 0;
        for (const Task* e : rq.queue) W += e->weight;
        lag = static_cast<int64_t>(static_cast<i128>(t.vlag) * (W + t.weight) / W);
    }
    if (rq.queue.empty()) {
        // An empty runqueue has no V; keep the task's own clock so its lag stays meaningful.
        V = t.vruntime + t.vlag;
    }
    t.vruntime = V - lag;
    if (initial && cfg_.features.on(Feat::PLACE_DEADLINE_INITIAL)) vslice /= 2;
    t.deadline = t.vruntime + vslice;
}

void Scheduler::enqueue(int cpu, Task& t, bool initial) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    pelt_update_cpu(cpu);
    place_entity(rq, t, initial);
    rq.queue.push_back(&t);
    t.on_rq = true;
    ++rq.nr_running;
    if (t.policy == SchedPolicy::idle) ++rq.nr_sched_idle;
    update_overload(cpu);
    hw_->util_changed(cpu);
}

void Scheduler::dequeue(int cpu, Task& t) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    pelt_update_cpu(cpu);
    const int64_t V = avg_vruntime(rq);
    int64_t lag = V - t.vruntime;
    const int64_t limit = calc_delta_fair(std::max<int64_t>(2 * t.slice, tick_ns_), t);
    lag = std::clamp(lag, -limit, limit);
    if (t.sched_delayed) {
        if (cfg_.features.on(Feat::DELAY_ZERO) && lag > 0) lag = 0;
        t.sched_delayed = false;
        --rq.nr_delayed;
    } else if (t.policy == SchedPolicy::idle) {
        --rq.nr_sched_idle;
    }
    t.vlag = lag;
    auto it = std::find(rq.queue.begin(), rq.queue.end(), &t);
    if (it != rq.queue.end()) rq.queue.erase(it);
    t.on_rq = false;
    --rq.nr_running;
    update_overload(cpu);
    hw_->util_changed(cpu);
}

void Scheduler::update_curr(int cpu, bool kernel_point) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    Task* t = rq.curr;
    if (!t || rq.mode != Mode::running) return;
    const Time now = engine_.now();
    const int64_t delta = now - t->exec_start;
    if (delta > 0) {
        t->exec_start = now;
        t->sum_exec += delta;
        t->vruntime += calc_delta_fair(delta, *t);
    }
    // The simulator's own step boundaries only account: fair.c notices a used-up slice where it
    // calls update_curr (tick, enqueue, dequeue, wakeup check, pick), so a task that makes no
    // such call runs on until the next tick, as on a kernel without HRTICK.
    if (!kernel_point) return;
    bool resched = false;
    if (t->vruntime >= t->deadline) {  // update_deadline()
        t->deadline = t->vruntime + calc_delta_fair(t->slice, *t);
        resched = true;
    }
    // nr_queued counts delayed entities; an expired protection also asks for a new pick.
    if (rq.nr_running > 1 && (resched || t->vruntime >= t->vprot)) rq.need_resched = true;
}

// check_preempt_wakeup_fair(), v6.19.
bool Scheduler::check_preempt_wakeup(int cpu, Task& p, uint32_t flags) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    Task* se = rq.curr;
    if (!se) return true;  // the idle class: any fair wakee runs at once
    if (se == &p || rq.need_resched) return false;
    if (!cfg_.features.on(Feat::WAKEUP_PREEMPTION)) return false;
    const bool se_idle = se->policy == SchedPolicy::idle;
    const bool p_idle = p.policy == SchedPolicy::idle;
    if (se_idle && !p_idle) {
        se->vprot = se->vruntime;
        return true;
    }
    if (se_idle != p_idle) return false;
    if (p.policy == SchedPolicy::batch || p.policy == SchedPolicy::idle) return false;
    update_curr(cpu);
    bool protect = true;
    if (cfg_.features.on(Feat::PREEMPT_SHORT) && p.slice < se->slice) {
        protect = false;
    } else if ((flags & WF_FORK) || p.sched_delayed) {
        return false;
    }
    if (pick_eevdf(rq, protect) == &p) {
        if (!protect) se->vprot = se->vruntime;
        return true;
    }
    if (cfg_.features.on(Feat::RUN_TO_PARITY))
        se->vprot = std::min(se->vprot, se->vruntime + calc_delta_fair(slice_ns_, *se));
    return false;
}

// ---------------------------------------------------------------------------------------------
// try_to_wake_up (kernel/sched/core.c).

bool Scheduler::wake(int wakee, const WakeSite& site) {
    Task& p = tasks_[static_cast<size_t>(wakee)];
    Task* waker = driving_;
    int this_cpu = waker ? driving_cpu_ : (p.cpu >= 0 ? p.cpu : 0);
    p.in_iowait = site.iowait;
    return try_to_wake_up(p, policy_.site_flags(site), waker, this_cpu);
}

void Scheduler::arm_timer(int task, Time at, uint32_t cookie) {
    engine_.schedule(at, target_, kTimer, task, cookie);
}

bool Scheduler::try_to_wake_up(Task& p, uint32_t flags, Task* waker, int this_cpu) {
    flags |= WF_TTWU;
    const Time now = engine_.now();
    if (p.block_pending && (p.state == TaskState::running || p.state == TaskState::runnable)) {
        // Set to sleep but not yet through schedule() (still running, or preempted on the way):
        // ttwu_runnable() just marks it running again.
        p.block_pending = false;
        ++m_.c.wakeups;
        ++m_.c.wakeups_runnable;
        // ttwu_stat() counts every successful wakeup as local or remote (task_cpu vs this_cpu).
        if (p.cpu == this_cpu)
            ++m_.c.wakeups_local;
        else
            ++m_.c.wakeups_remote;
        return true;
    }
    switch (p.state) {
        case TaskState::running:
            return false;
        case TaskState::runnable:
        case TaskState::waking:
        case TaskState::unstarted:
        case TaskState::exited:
            return false;
        case TaskState::sleeping:
            break;
    }
    ++m_.c.wakeups;
    ++p.nr_wakeups;
    p.wake_time = now;
    if (trace_) trace_->waking(now, this_cpu, waker, p, p.cpu);
    if (p.on_rq) {
        // ttwu_runnable(): a delayed-dequeue sleeper is requeued where it is, no placement.
        Rq& rq = rqs_[static_cast<size_t>(p.cpu)];
        pelt_update_task(p, false, false);
        pelt_update_cpu(p.cpu);
        p.sched_delayed = false;
        --rq.nr_delayed;
        if (p.policy == SchedPolicy::idle) ++rq.nr_sched_idle;
        p.state = TaskState::runnable;
        ++m_.c.wakeups_runnable;
        if (p.cpu == this_cpu)
            ++m_.c.wakeups_local;
        else
            ++m_.c.wakeups_remote;
        if (waker) waker->overhead_left += prof_.wake_local_ns;
        if (trace_) trace_->wakeup(now, p.cpu, rq.curr, p, p.cpu);
        update_idle_state(p.cpu);
        if (check_preempt_wakeup(p.cpu, p, flags)) resched(p.cpu);
        return true;
    }
    ttwu_cost_ = 0;
    int cpu = select_task_rq(p, p.wake_cpu, flags, waker, this_cpu);
    pelt_update_task(p, false, false);  // the sleep's decay, before the signal moves with the task
    if (cpu != p.cpu) {
        flags |= WF_MIGRATED;
        set_task_cpu(p, cpu, MigrationCause::wakeup);
    }
    ttwu_queue(p, cpu, flags, waker, this_cpu);
    // The waker pays for the whole try_to_wake_up before it continues.
    if (waker) waker->overhead_left += jitter(ttwu_cost_);
    return true;
}

int Scheduler::select_task_rq(Task& p, int cpu_hint, uint32_t& flags, const Task* waker, int this_cpu) {
    ++select_calls_;
    ++m_.c.select_calls;
    WakeExplain* ex = explain_this() ? explain_ : nullptr;
    int cpu;
    if (p.nr_cpus_allowed > 1 && !p.migration_disabled) {
        cpu = select_task_rq_fair(p, cpu_hint, flags, waker, this_cpu, ex);
        flags |= WF_RQ_SELECTED;
        ttwu_cost_ += prof_.select_base_ns;
    } else {
        cpu = p.allowed.test(p.cpu) ? p.cpu : p.allowed.first();
        ++m_.c.outcomes[static_cast<size_t>(SelectOutcome::pinned)];
        if (ex)
            ex->line("select_task_rq: " + std::string(p.migration_disabled ? "migration disabled" : "one allowed CPU") +
                     ": fair class not consulted, cpu" + std::to_string(cpu));
    }
    if (!p.allowed.test(cpu)) {  // select_fallback_rq()
        const CpuSet near = p.allowed & topo_.node_span(p.cpu);
        cpu = near.empty() ? p.allowed.first() : near.first();
    }
    if (ex) ex->line("result: cpu" + std::to_string(cpu) + (cpu != p.cpu ? " (migration from cpu" + std::to_string(p.cpu) + ")" : " (no migration)"));
    return cpu;
}

void Scheduler::record_wakee(Task* waker, const Task& p) {
    const Time now = engine_.now();
    // Decay at most once per call, after a second without decay.
    if (now > waker->wakee_flip_decay_ts + kNsPerSec) {
        waker->wakee_flips >>= 1;
        waker->wakee_flip_decay_ts = now;
    }
    if (waker->last_wakee != p.id) {
        waker->last_wakee = p.id;
        ++waker->wakee_flips;
    }
}

bool Scheduler::wake_wide(const Task& p, const Task* waker, int this_cpu) const {
    if (!waker) return false;
    uint32_t master = waker->wakee_flips, slave = p.wakee_flips;
    const uint32_t factor = static_cast<uint32_t>(sd_.of(this_cpu).sd_llc_size);
    if (master < slave) std::swap(master, slave);
    if (slave < factor || master < slave * factor) return false;
    return true;
}

int Scheduler::wake_affine(int sd_level, const Task& p, const Task* waker, int this_cpu, int prev, bool sync,
                           WakeExplain* ex) {
    int target = -1;
    if (cfg_.features.on(Feat::WA_IDLE)) {
        // wake_affine_idle()
        if (available_idle_cpu(this_cpu) && topo_.shares_llc(this_cpu, prev)) {
            target = available_idle_cpu(prev) ? prev : this_cpu;
            if (ex) ex->line("  wake_affine_idle: waker CPU idle (interrupt wake), -> " + cpu_str(target));
        } else if (sync && nr_running(this_cpu) - nr_delayed(this_cpu) == 1) {
            target = this_cpu;
            if (ex) ex->line("  wake_affine_idle: sync and the waker is alone on cpu" + std::to_string(this_cpu) + " -> this_cpu");
        } else if (available_idle_cpu(prev)) {
            target = prev;
            if (ex) ex->line("  wake_affine_idle: prev cpu" + std::to_string(prev) + " idle -> prev");
        } else if (ex) {
            ex->line("  wake_affine_idle: no decision");
        }
    }
    if (cfg_.features.on(Feat::WA_WEIGHT) && target == -1) {
        // wake_affine_weight()
        const SchedDomain& D = sd_.of(this_cpu).levels[static_cast<size_t>(sd_level)];
        double this_eff = cpu_load(this_cpu);
        bool decided = false;
        if (sync && waker) {
            const double cur = task_load(*waker);
            if (cur > this_eff) {
                target = this_cpu;
                decided = true;
            } else {
                this_eff -= cur;
            }
        }
        if (!decided) {
            const double tl = task_load(p);
            this_eff += tl;
            double prev_eff = cpu_load(prev) - tl;
            if (cfg_.features.on(Feat::WA_BIAS)) {
                this_eff *= 100;
                prev_eff *= 100 + (D.imbalance_pct - 100) / 2;
            }
            this_eff *= capacity_of(prev);
            prev_eff *= capacity_of(this_cpu);
            if (sync) prev_eff += 1;
            if (this_eff < prev_eff) target = this_cpu;
            if (ex)
                ex->line("  wake_affine_weight: this_eff=" + std::to_string(static_cast<int64_t>(this_eff)) +
                         " prev_eff=" + std::to_string(static_cast<int64_t>(prev_eff)) + " -> " +
                         (target == this_cpu ? "this_cpu" : "prev"));
        } else if (ex) {
            ex->line("  wake_affine_weight: sync and the waker's load exceeds its CPU's -> this_cpu");
        }
    }
    if (target != this_cpu) return prev;
    ++m_.c.wakeups_affine;
    return this_cpu;
}

int Scheduler::select_task_rq_fair(Task& p, int prev, uint32_t wake_flags, const Task* waker, int this_cpu,
                                   WakeExplain* ex) {
    const bool sync = (wake_flags & WF_SYNC) != 0;
    const uint32_t sd_flag = wake_flags & 0xF;
    int new_cpu = prev;
    bool want_affine = false;
    SelectCtx ctx{*this, p, waker, this_cpu, prev, wake_flags, sync};
    auto outcome = [&](SelectOutcome o) { ++m_.c.outcomes[static_cast<size_t>(o)]; };
    if (ex)
        ex->line("select_task_rq_fair: wakee " + p.comm + " prev=cpu" + std::to_string(prev) + " waker=" +
                 (waker ? waker->comm : std::string("<irq>")) + " this_cpu=cpu" + std::to_string(this_cpu) +
                 " flags=" + wake_flags_to_string(wake_flags));
    if (wake_flags & WF_TTWU) {
        if (waker) record_wakee(const_cast<Task*>(waker), p);
        for (const auto& rule : policy_.rules) {
            int c = rule->early(ctx);
            if (c >= 0 && p.allowed.test(c)) {
                outcome(SelectOutcome::policy_early);
                if (ex) ex->line("policy rule " + rule->name() + " (before WF_CURRENT_CPU) -> cpu" + std::to_string(c));
                return c;
            }
        }
        if ((wake_flags & WF_CURRENT_CPU) && p.allowed.test(this_cpu)) {
            outcome(SelectOutcome::current_cpu);
            if (ex) ex->line("WF_CURRENT_CPU and this_cpu allowed -> cpu" + std::to_string(this_cpu));
            return this_cpu;
        }
        const bool wide = wake_wide(p, waker, this_cpu);
        if (wide) ++m_.c.wake_wide;
        want_affine = !wide && p.allowed.test(this_cpu);
        if (ex)
            ex->line("record_wakee: waker flips=" + std::to_string(waker ? waker->wakee_flips : 0) +
                     " wakee flips=" + std::to_string(p.wakee_flips) + " llc_size=" +
                     std::to_string(sd_.of(this_cpu).sd_llc_size) + " wake_wide=" + (wide ? "yes" : "no") +
                     " want_affine=" + (want_affine ? "yes" : "no"));
    }
    int slow_level = -1;
    const auto& levels = sd_.of(this_cpu).levels;
    for (size_t i = 0; i < levels.size(); ++i) {
        const SchedDomain& D = levels[i];
        if (want_affine && (D.flags & SD_WAKE_AFFINE) && D.span.test(prev)) {
            if (this_cpu != prev) {
                if (ex) ex->line("domain " + D.name + " spans prev: wake_affine(sync=" + (sync ? "1" : "0") + ")");
                new_cpu = wake_affine(static_cast<int>(i), p, waker, this_cpu, prev, sync, ex);
            } else if (ex) {
                ex->line("domain " + D.name + ": this_cpu == prev, wake_affine skipped");
            }
            for (const auto& rule : policy_.rules) {
                int c = rule->after_wake_affine(ctx, new_cpu);
                if (c >= 0 && p.allowed.test(c)) {
                    outcome(SelectOutcome::policy_affine);
                    if (ex) ex->line("policy rule " + rule->name() + " (affine branch) -> cpu" + std::to_string(c));
                    return c;
                }
            }
            slow_level = -1;
            break;
        }
        if (D.flags & sd_flag)
            slow_level = static_cast<int>(i);
        else if (!want_affine)
            break;
    }
    if (slow_level >= 0) {
        outcome(SelectOutcome::slow_path);
        new_cpu = find_dst_cpu(p, this_cpu, prev, sd_flag);
        if (ex) ex->line("slow path (sched_balance_find_dst_cpu) -> cpu" + std::to_string(new_cpu));
    } else if (wake_flags & WF_TTWU) {
        if (ex) ex->line("select_idle_sibling(prev=cpu" + std::to_string(prev) + ", target=cpu" + std::to_string(new_cpu) + ")");
        new_cpu = select_idle_sibling(p, waker, this_cpu, prev, new_cpu, ex);
    }
    return new_cpu;
}

int Scheduler::select_idle_sibling(Task& p, const Task* waker, int this_cpu, int prev, int target,
                                   WakeExplain* ex) {
    const bool asym = sd_.asym_active();
    auto fits = [&](int c) { return !asym || task_fits_cpu(p, c); };
    auto outcome = [&](SelectOutcome o) { ++m_.c.outcomes[static_cast<size_t>(o)]; };
    auto say = [&](const std::string& s) {
        if (ex) ex->line("  " + s);
    };
    // 1. The target itself.
    if (usable(target) && fits(target)) {
        if (ex) say("target cpu" + std::to_string(target) + " is idle -> target");
        outcome(SelectOutcome::sis_target);
        return target;
    }
    if (ex) say("target cpu" + std::to_string(target) + " busy (nr_running=" + std::to_string(nr_running(target)) + ")");
    // 2. prev, when idle and cache-affine.
    int prev_aff = -1;
    if (prev != target && topo_.shares_llc(prev, target) && usable(prev) && fits(prev)) {
        if (!sd_.cluster_active() || topo_.cpu(prev).cluster == topo_.cpu(target).cluster) {
            if (ex) say("prev cpu" + std::to_string(prev) + " is idle and shares the LLC -> prev");
            outcome(SelectOutcome::sis_prev);
            return prev;
        }
        prev_aff = prev;
    } else {
        if (ex) say("prev cpu" + std::to_string(prev) + (prev == target ? " is the target"
                                                     : !usable(prev)           ? " busy"
                                                     : !topo_.shares_llc(prev, target) ? " idle but not cache-affine"
                                                                               : " idle but the wakee does not fit it"));
    }
    // 3. A per-CPU kthread waker (I/O completion) stacks the wakee on its CPU.
    if (waker && waker->per_cpu_kthread && prev == this_cpu && nr_running(this_cpu) <= 1 && fits(prev)) {
        if (ex) say("waker is a per-CPU kthread alone on prev -> prev");
        outcome(SelectOutcome::sis_kthread);
        return prev;
    }
    // 4. recent_used_cpu.
    int recent = p.recent_used_cpu;
    p.recent_used_cpu = prev;
    if (recent >= 0 && recent != prev && recent != target && topo_.shares_llc(recent, target) && usable(recent) &&
        p.allowed.test(recent) && fits(recent)) {
        if (!sd_.cluster_active() || topo_.cpu(recent).cluster == topo_.cpu(target).cluster) {
            if (ex) say("recent_used_cpu cpu" + std::to_string(recent) + " is idle -> recent");
            outcome(SelectOutcome::sis_recent);
            return recent;
        }
    } else {
        recent = -1;
    }
    // 5. Asymmetric capacity: search the asym domain for an idle CPU that fits.
    if (asym && sd_.of(target).sd_asym_cpucapacity >= 0) {
        int c = select_idle_capacity(p, target);
        if (ex) say("select_idle_capacity -> " + cpu_str(c >= 0 ? c : target));
        outcome(SelectOutcome::sis_capacity);
        return c >= 0 ? c : target;
    }
    // 6. No LLC domain: nothing to search.
    if (sd_.of(target).sd_llc < 0) {
        if (ex) say("no LLC domain -> target");
        outcome(SelectOutcome::sis_fallback);
        return target;
    }
    // 7. SMT: an idle sibling of prev when no core is fully idle.
    bool has_idle_core = false;
    if (sd_.smt_active()) {
        has_idle_core = has_idle_cores(target);
        if (!has_idle_core && topo_.shares_llc(prev, target)) {
            const CpuSet sib = topo_.smt_siblings(prev) & p.allowed & topo_.llc_span(target);
            for (int s = sib.first(); s >= 0; s = sib.next(s + 1)) {
                if (s != prev && usable(s)) {
                    if (ex) say("no idle core; prev's SMT sibling cpu" + std::to_string(s) + " idle -> sibling");
                    outcome(SelectOutcome::sis_smt);
                    return s;
                }
            }
        }
    }
    // 8. select_idle_cpu.
    int probes = 0;
    int c = select_idle_cpu(p, target, has_idle_core, target, probes);
    m_.c.sis_probes += static_cast<uint64_t>(probes);
    ttwu_cost_ += probes * prof_.select_probe_ns;
    if (c >= 0) {
        if (ex) say(std::string("select_idle_cpu (") + (has_idle_core ? "idle-core scan" : "idle-cpu scan, nr_idle_scan=" + std::to_string(nr_idle_scan(target))) +
            ", " + std::to_string(probes) + " probed) -> cpu" + std::to_string(c));
        outcome(SelectOutcome::sis_scan);
        return c;
    }
    if (ex) say("select_idle_cpu found nothing (" + std::to_string(probes) + " probed, nr_idle_scan=" + std::to_string(nr_idle_scan(target)) + ")");
    // 9. Fallbacks.
    outcome(SelectOutcome::sis_fallback);
    if (prev_aff >= 0) {
        if (ex) say("fallback: prev (other cluster) -> cpu" + std::to_string(prev_aff));
        return prev_aff;
    }
    if (recent >= 0) {
        if (ex) say("fallback: recent_used_cpu -> cpu" + std::to_string(recent));
        return recent;
    }
    if (ex) say("fallback: target -> cpu" + std::to_string(target));
    return target;
}

int Scheduler::select_idle_cpu(const Task& p, int sd_cpu, bool has_idle_core, int target, int& probes) {
    const CpuDomains& cd = sd_.of(sd_cpu);
    CpuSet cpus = cd.levels[static_cast<size_t>(cd.sd_llc)].span & p.allowed;
    int nr = INT32_MAX;
    LlcShared& sh = llc_[static_cast<size_t>(cd.sd_llc_id)];
    if (cfg_.features.on(Feat::SIS_UTIL)) {
        nr = sh.nr_idle_scan + 1;
        if (nr == 1) return -1;  // the LLC is considered overloaded: no scan at all
    }
    int idle_cpu = -1;
    // select_idle_core(): a fully idle core, remembering the first idle thread as a fallback.
    auto idle_core = [&](int core_cpu, CpuSet& remaining) -> int {
        bool all_idle = true;
        const CpuSet& sib = topo_.smt_siblings(core_cpu);
        for (int s = sib.first(); s >= 0; s = sib.next(s + 1)) {
            ++probes;
            if (!available_idle_cpu(s)) {
                all_idle = false;
                if (idle_cpu == -1 && sched_idle_cpu(s) && cpus.test(s)) {
                    idle_cpu = s;
                    break;
                }
                if (idle_cpu == -1) continue;
                break;
            }
            if (idle_cpu == -1 && cpus.test(s)) idle_cpu = s;
        }
        if (all_idle) return core_cpu;
        remaining -= sib;
        return -1;
    };
    // Scan `set` in id order from `start`, wrapping; the non-core branch stops after nr probes.
    auto scan = [&](CpuSet set, int start) -> int {
        if (has_idle_core) {
            CpuSet remaining = set;
            for (int c = remaining.next_wrap(start); c >= 0; c = remaining.next_wrap(c + 1)) {
                remaining.clear(c);
                int r = idle_core(c, remaining);
                if (r >= 0) return r;
                if (remaining.empty()) break;
            }
            return -1;
        }
        const CpuSet cand = set & (idle_mask_ | sched_idle_mask_);
        int c = cand.empty() ? -1 : cand.next_wrap(start);
        const int total = set.count();
        int pos;  // 1-based position of c in the wrap order
        if (c < 0)
            pos = total + 1;
        else if (c >= start)
            pos = set.count_range(start, c + 1);
        else
            pos = set.count_range(start, kMaxCpus) + set.count_range(0, c + 1);
        // Iteration i (1-based) first does --nr and gives up when it reaches 0.
        const int allowed_probes = nr - 1;
        if (pos > allowed_probes) {
            probes += std::min(total, allowed_probes);
            nr -= std::min(total, allowed_probes) + (allowed_probes < total ? 1 : 0);
            return -2;  // scan limit reached
        }
        probes += pos;
        nr -= pos;
        return c;
    };
    if (sd_.cluster_active() && cd.levels.size() > 0) {
        const CpuSet cl = topo_.cluster_span(target) & cpus;
        if (!(cl == cpus) && !cl.empty()) {
            int r = scan(cl, target + 1);
            if (r == -2) return -1;
            if (r >= 0) return r;
            cpus -= topo_.cluster_span(target);
        }
    }
    int r = scan(cpus, target + 1 >= kMaxCpus ? 0 : target + 1);
    if (r == -2) return -1;
    if (r >= 0) return r;
    if (has_idle_core) sh.has_idle_cores = false;  // a full scan found no idle core
    return idle_cpu;
}

int Scheduler::select_idle_capacity(const Task& p, int target) {
    const CpuDomains& cd = sd_.of(target);
    const CpuSet span = cd.levels[static_cast<size_t>(cd.sd_asym_cpucapacity)].span & p.allowed;
    int best = -1, best_cap = 0;
    for (int c = span.next_wrap(target); c >= 0;) {
        if (usable(c)) {
            if (task_fits_cpu(p, c)) return c;
            if (capacity_of(c) > best_cap) {
                best = c;
                best_cap = capacity_of(c);
            }
        }
        c = span.next_wrap(c + 1);
        if (c == span.next_wrap(target)) break;
    }
    return best;
}

// sched_balance_find_dst_cpu(): fork/exec placement, descending from the highest domain with the
// flag: the group with the most idle CPUs (then the least utilisation), then its idlest CPU.
int Scheduler::find_dst_cpu(const Task& p, int cpu, int prev, uint32_t sd_flag) {
    const auto& levels0 = sd_.of(cpu).levels;
    int top = -1;
    for (size_t i = 0; i < levels0.size(); ++i)
        if (levels0[i].flags & sd_flag) top = static_cast<int>(i);
    if (top < 0) return p.allowed.test(prev) ? prev : p.allowed.first();
    if (!levels0[static_cast<size_t>(top)].span.intersects(p.allowed)) return prev;
    int new_cpu = cpu;
    for (int level = top; level >= 0; --level) {
        const auto& D = sd_.of(cpu).levels[static_cast<size_t>(level)];
        if (!(D.flags & sd_flag)) continue;
        struct Stats {
            int idle = 0;
            double util = 0;
            int nr = 0;
        };
        auto stats = [&](const CpuSet& g) {
            Stats s;
            const CpuSet a = g & p.allowed;
            for (int c = a.first(); c >= 0; c = a.next(c + 1)) {
                s.idle += available_idle_cpu(c) ? 1 : 0;
                s.util += cpu_util(c);
                s.nr += nr_running(c);
            }
            return s;
        };
        const Stats local = stats(D.groups.front());
        int best_g = -1;
        Stats best{};
        for (size_t gi = 1; gi < D.groups.size(); ++gi) {
            if (!D.groups[gi].intersects(p.allowed)) continue;
            Stats s = stats(D.groups[gi]);
            if (best_g < 0 || s.idle > best.idle || (s.idle == best.idle && s.util < best.util)) {
                best_g = static_cast<int>(gi);
                best = s;
            }
        }
        if (best_g < 0) continue;
        const bool move = best.idle > local.idle || (best.idle == local.idle && best.idle == 0 && best.nr < local.nr);
        if (!move) continue;
        // find_dst_group_cpu(): an idle CPU (most recently idled), else the least loaded.
        const CpuSet g = D.groups[static_cast<size_t>(best_g)] & p.allowed;
        int pick = -1;
        Time latest = -1;
        double least = 0;
        bool have_idle = false;
        for (int c = g.first(); c >= 0; c = g.next(c + 1)) {
            if (sched_idle_cpu(c)) {
                pick = c;
                break;
            }
            if (available_idle_cpu(c)) {
                const Time st = rqs_[static_cast<size_t>(c)].idle_stamp;
                if (!have_idle || st > latest) {
                    pick = c;
                    latest = st;
                }
                have_idle = true;
            } else if (!have_idle) {
                const double l = cpu_load(c) + nr_running(c) * 1024.0;
                if (pick < 0 || l < least) {
                    pick = c;
                    least = l;
                }
            }
        }
        if (pick < 0 || pick == cpu) continue;
        cpu = pick;
        new_cpu = pick;
    }
    if (!p.allowed.test(new_cpu)) new_cpu = p.allowed.first();
    return new_cpu;
}

void Scheduler::set_task_cpu(Task& p, int cpu, MigrationCause cause) {
    if (p.cpu == cpu) return;
    const int orig = p.cpu;
    if (orig >= 0) {
        ++p.nr_migrations;
        ++m_.c.migrations_by_cause[static_cast<size_t>(cause)];
        ++m_.c.migrations_by_distance[static_cast<size_t>(topo_.classify(orig, cpu))];
        if (trace_) trace_->migrate(engine_.now(), driving_cpu_ >= 0 ? driving_cpu_ : orig, driving_, p, orig, cpu);
        // migrate_task_rq_fair(): the task's signals leave the old CPU and join the new one.
        pelt_update_cpu(orig);
        pelt_update_cpu(cpu);
        Rq& from = rqs_[static_cast<size_t>(orig)];
        Rq& to = rqs_[static_cast<size_t>(cpu)];
        from.pelt.util_avg = std::max(0.0, from.pelt.util_avg - p.pelt.util_avg);
        from.pelt.load_avg = std::max(0.0, from.pelt.load_avg - p.pelt.load_avg);
        to.pelt.util_avg += p.pelt.util_avg;
        to.pelt.load_avg += p.pelt.load_avg;
    }
    p.cpu = cpu;
    p.wake_cpu = cpu;
}

// ttwu_queue_cond(): the cases in which the target CPU enqueues the wakee itself after an IPI.
bool Scheduler::ttwu_queue_cond(const Task& p, int cpu, int this_cpu) const {
    if (!p.allowed.test(cpu)) return false;
    if (!topo_.shares_llc(this_cpu, cpu)) return true;
    if (cpu == this_cpu) return false;
    if (rqs_[static_cast<size_t>(cpu)].nr_running == 0) return true;
    return false;
}

void Scheduler::ttwu_queue(Task& p, int cpu, uint32_t flags, Task* waker, int this_cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    const bool idle = rq.mode == Mode::idle;
    if (cpu == this_cpu)
        ++m_.c.wakeups_local;
    else
        ++m_.c.wakeups_remote;
    if (cfg_.features.on(Feat::TTWU_QUEUE) && ttwu_queue_cond(p, cpu, this_cpu)) {
        p.state = TaskState::waking;
        rq.wake_list.push_back(&p);
        rq.ttwu_pending = true;
        update_idle_state(cpu);
        if (!rq.ipi_in_flight) {
            Time delay;
            if (idle && hw_->polling(cpu)) {
                delay = prof_.poll_wake_ns + hw_->wake_latency(cpu);
                ++m_.c.wakeups_poll;
            } else {
                delay = prof_.ipi_latency_ns + (idle ? hw_->wake_latency(cpu) : 0);
                ++m_.c.ipis;
                ++m_.c.wakeups_ipi;
            }
            // The IPI leaves at the end of the waker's try_to_wake_up (selection + queueing).
            ttwu_cost_ += prof_.wake_remote_ns;
            kick_cpu(cpu, jitter((waker ? ttwu_cost_ : 0) + delay));
        } else {
            ttwu_cost_ += prof_.wake_remote_ns;
        }
        return;
    }
    ttwu_cost_ += cpu == this_cpu ? prof_.wake_local_ns : prof_.wake_remote_ns;
    ttwu_do_activate(cpu, p, flags);
    if (idle && !rq.ipi_in_flight) {
        // The wakee sits on an idle CPU: a resched IPI (or the interrupt being handled there) runs it.
        Time delay = cpu == this_cpu ? 0 : (waker ? ttwu_cost_ : 0) + (hw_->polling(cpu) ? prof_.poll_wake_ns : prof_.ipi_latency_ns) + hw_->wake_latency(cpu);
        if (cpu != this_cpu) ++m_.c.ipis;
        kick_cpu(cpu, delay);
    }
}

void Scheduler::ttwu_do_activate(int cpu, Task& p, uint32_t flags) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    const Time now = engine_.now();
    if (rq.idle_stamp != 0) {  // the CPU was idle: feed avg_idle
        const int64_t d = now - rq.idle_stamp;
        rq.avg_idle += (d - rq.avg_idle) / 8;
        rq.avg_idle = std::min(rq.avg_idle, 2 * rq.max_idle_balance_cost);
        rq.idle_stamp = 0;
    }
    if (p.in_iowait) {  // enqueue_task_fair(): cpufreq_update_util(rq, SCHED_CPUFREQ_IOWAIT)
        p.in_iowait = false;
        hw_->iowait_boost(cpu);
    }
    enqueue(cpu, p, false);
    p.state = TaskState::runnable;
    if (trace_) trace_->wakeup(now, cpu, rq.curr, p, cpu);
    update_idle_state(cpu);
    if (rq.mode != Mode::idle && check_preempt_wakeup(cpu, p, flags)) resched(cpu);
}

// ---------------------------------------------------------------------------------------------
// CPU execution: segments of work, context switches, idle.

void Scheduler::update_overload(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    const bool over = rq.nr_running - rq.nr_delayed >= 2;
    if (over != rq.overloaded) {
        rq.overloaded = over;
        nr_overloaded_ += over ? 1 : -1;
    }
}

void Scheduler::update_idle_state(int cpu) {
    update_overload(cpu);
    const Rq& rq = rqs_[static_cast<size_t>(cpu)];
    idle_mask_.assign(cpu, rq.curr == nullptr && rq.nr_running == 0 && !rq.ttwu_pending);
    sched_idle_mask_.assign(cpu, rq.nr_running > 0 && rq.nr_sched_idle == rq.nr_running);
}

// __update_idle_core(): a CPU entering idle sets the LLC's has_idle_cores if its core is idle.
void Scheduler::update_idle_core(int cpu) {
    if (!sd_.smt_active()) return;
    LlcShared& sh = llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)];
    if (sh.has_idle_cores) return;
    const CpuSet& sib = topo_.smt_siblings(cpu);
    for (int s = sib.first(); s >= 0; s = sib.next(s + 1))
        if (s != cpu && !available_idle_cpu(s)) return;
    sh.has_idle_cores = true;
}

// Sends the IPI (or wake of a polling/halted CPU) that makes `cpu` process its wake list and
// schedule, unless one is already on its way.
void Scheduler::kick_cpu(int cpu, Time delay) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    if (rq.ipi_in_flight) return;
    rq.ipi_in_flight = true;
    engine_.schedule(engine_.now() + delay, target_, kIpi, cpu);
}

void Scheduler::resched(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    switch (rq.mode) {
        case Mode::idle:
            break;  // the pending IPI (or the caller) schedules it
        case Mode::switching:
            rq.need_resched = true;
            break;
        case Mode::running:
            rq.need_resched = true;
            if (driving_cpu_ == cpu || irq_cpu_ == cpu || prof_.preempt_lazy) break;  // handled after the driver or IRQ / at the tick
            preempt_now(cpu);
            break;
    }
}

void Scheduler::start_segment(int cpu, SegKind kind, int64_t ref_ns) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    rq.seg = kind;
    rq.seg_start = engine_.now();
    const double s = speed(cpu);
    rq.seg_speed = s;
    const auto wall = static_cast<Time>(std::ceil(static_cast<double>(ref_ns) / s));
    engine_.schedule(engine_.now() + std::max<Time>(wall, 1), target_, kSegEnd, cpu, ++rq.gen);
}

void Scheduler::stop_segment(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    if (rq.seg == SegKind::none) return;
    Task* t = rq.curr;
    const auto done = static_cast<int64_t>(static_cast<double>(engine_.now() - rq.seg_start) * rq.seg_speed);
    int64_t& left = rq.seg == SegKind::overhead ? t->overhead_left : t->work_left;
    left = std::max<int64_t>(0, left - done);
    rq.seg = SegKind::none;
    ++rq.gen;
}

void Scheduler::preempt_now(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    if (rq.mode != Mode::running) return;
    stop_segment(cpu);
    schedule(cpu);
}

void Scheduler::count_switch(int cpu, Task* prev, Task* next, char prev_state) {
    ++m_.c.context_switches;
    if (prev && prev_state == 'R') ++m_.c.preemptions;  // a re-pick of the same task is no preemption
    if (trace_) trace_->sched_switch(engine_.now(), cpu, prev, prev_state, next);
}

void Scheduler::schedule(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    rq.need_resched = false;
    Task* prev = rq.curr;
    if (prev && prev->state == TaskState::running) {
        update_curr(cpu);
        pelt_update_task(*prev, true, true);
        prev->state = TaskState::runnable;  // preempted: stays queued
    }
    Task* next = nullptr;
    for (;;) {
        next = pick_eevdf(rq, true);
        if (next && next->sched_delayed) {
            dequeue(cpu, *next);  // a delayed sleeper reaching the front leaves now
            next->state = TaskState::sleeping;
            update_idle_state(cpu);
            continue;
        }
        break;
    }
    if (!next && newidle_balance(cpu)) next = pick_eevdf(rq, true);
    if (!next) {
        go_idle(cpu);
        return;
    }
    pelt_update_cpu(cpu);
    pelt_update_task(*next, false, true);
    next->state = TaskState::running;
    if (next == prev) {
        rq.mode = Mode::running;
        next->exec_start = engine_.now();
        run_curr(cpu);
        return;
    }
    const char prev_state = prev ? (prev->state == TaskState::runnable ? 'R' : 'S') : 'R';
    count_switch(cpu, prev, next, prev_state);
    if (prev) hw_->switch_out(*prev, cpu);
    if (!prev) {
        rq.busy_since = engine_.now();
        hw_->idle_exit(cpu);
        hw_->set_busy(cpu, true);
        arm_tick(cpu);
    }
    rq.curr = next;
    // set_protect_slice(): protected up to the deadline, or for the shortest queued slice
    // (RUN_TO_PARITY), else for one normalised base slice at least.
    const int64_t quantum = std::min(cfg_.features.on(Feat::RUN_TO_PARITY) ? slice_ns_ : cfg_.base_slice_ns, next->slice);
    next->vprot = quantum == next->slice ? next->deadline
                                         : std::min(next->deadline, next->vruntime + calc_delta_fair(quantum, *next));
    rq.mode = Mode::switching;
    rq.seg = SegKind::none;
    update_idle_state(cpu);
    const Time cost = jitter(prev ? prof_.ctx_switch_ns : prof_.idle_switch_ns);
    engine_.schedule(engine_.now() + cost, target_, kSwitchEnd, cpu, ++rq.gen);
}

void Scheduler::go_idle(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    Task* prev = rq.curr;
    pelt_update_cpu(cpu);
    if (prev) {
        count_switch(cpu, prev, nullptr, prev->state == TaskState::exited ? 'X' : 'S');
        hw_->switch_out(*prev, cpu);
    }
    if (rq.busy_since >= 0) {
        rq.busy_total += engine_.now() - rq.busy_since;
        rq.busy_since = -1;
    }
    rq.curr = nullptr;
    rq.mode = Mode::idle;
    rq.seg = SegKind::none;
    ++rq.gen;
    rq.idle_stamp = engine_.now();
    update_idle_state(cpu);
    update_idle_core(cpu);
    if (prev) {
        hw_->set_busy(cpu, false);
        hw_->idle_enter(cpu);
    }
}

void Scheduler::run_curr(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    for (int guard = 0;; ++guard) {
        Task* t = rq.curr;
        if (t->overhead_left > 0) {
            start_segment(cpu, SegKind::overhead, t->overhead_left);
            return;
        }
        if (t->block_pending) {
            t->block_pending = false;
            block_curr(cpu);
            return;
        }
        if (t->work_left > 0) {
            start_segment(cpu, SegKind::work, t->work_left);
            return;
        }
        if (guard > 1000000) throw std::logic_error("task " + t->comm + " makes no progress (zero-time loop)");
        driving_ = t;
        driving_cpu_ = cpu;
        Action a = driver_->next_action(*t);
        driving_ = nullptr;
        driving_cpu_ = -1;
        switch (a.kind) {
            case Action::run:
                t->work_left = std::max<int64_t>(0, a.ns);
                break;
            case Action::block:
                t->block_pending = true;
                break;
            case Action::exit:
                exit_curr(cpu);
                return;
        }
        if (rq.need_resched) {  // a wakeup issued by the driver preempts this task
            rq.mode = Mode::running;
            preempt_now(cpu);
            return;
        }
    }
}

void Scheduler::block_curr(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    Task* t = rq.curr;
    update_curr(cpu);
    pelt_update_task(*t, true, true);
    pelt_update_cpu(cpu);
    // util_est: sample at dequeue, EWMA weight 1/4.
    t->pelt.util_est = std::max(t->pelt.util_avg, t->pelt.util_est + (t->pelt.util_avg - t->pelt.util_est) / 4);
    policy_.on_block(*t, engine_.now());
    t->state = TaskState::sleeping;
    if (cfg_.features.on(Feat::DELAY_DEQUEUE) && rq.queue.size() > 1 && !entity_eligible(rq, *t)) {
        // dequeue_entity() with DELAY_DEQUEUE: the ineligible sleeper stays on the queue.
        t->sched_delayed = true;
        ++rq.nr_delayed;
        if (t->policy == SchedPolicy::idle) --rq.nr_sched_idle;
        update_overload(cpu);
    } else {
        dequeue(cpu, *t);
    }
    schedule(cpu);
}

void Scheduler::exit_curr(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    Task* t = rq.curr;
    update_curr(cpu);
    pelt_update_task(*t, true, true);
    t->state = TaskState::exited;
    dequeue(cpu, *t);
    schedule(cpu);
}

void Scheduler::process_wake_list(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    if (rq.wake_list.empty()) return;
    // sched_ttwu_pending(): the target enqueues its wakees itself.
    std::vector<Task*> list;
    list.swap(rq.wake_list);
    rq.ttwu_pending = false;
    for (Task* p : list) ttwu_do_activate(cpu, *p, WF_TTWU);
    list.clear();
    if (rq.wake_list.empty()) rq.wake_list.swap(list);  // keep the capacity: no allocation next time
    update_idle_state(cpu);
}

void Scheduler::arm_tick(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    if (rq.tick_armed) return;
    rq.tick_armed = true;
    const Time now = engine_.now();
    engine_.schedule((now / tick_ns_ + 1) * tick_ns_, target_, kTick, cpu);
}

void Scheduler::on_tick(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    rq.tick_armed = false;
    if (rq.mode == Mode::idle) return;  // NOHZ: an idle CPU stops its tick
    update_curr(cpu);
    pelt_update_cpu(cpu);
    if (rq.curr) pelt_update_task(*rq.curr, true, true);
    hw_->util_changed(cpu);
    if (engine_.now() >= rq.next_balance) periodic_balance(cpu, false);
    if (rq.nr_running - rq.nr_delayed >= 2) kick_idle_balance(cpu);
    if (rq.need_resched && rq.mode == Mode::running) preempt_now(cpu);
    if (rq.mode != Mode::idle) arm_tick(cpu);
}

void Scheduler::on_event(const Event& e) {
    const int cpu = e.a;
    switch (e.kind) {
        case kSegEnd: {
            Rq& rq = rqs_[static_cast<size_t>(cpu)];
            if (e.b != rq.gen || rq.mode != Mode::running) return;
            Task* t = rq.curr;
            if (rq.seg == SegKind::overhead)
                t->overhead_left = 0;
            else
                t->work_left = 0;
            rq.seg = SegKind::none;
            update_curr(cpu, false);
            if (rq.need_resched && !prof_.preempt_lazy) {
                preempt_now(cpu);
                return;
            }
            run_curr(cpu);
            return;
        }
        case kSwitchEnd: {
            Rq& rq = rqs_[static_cast<size_t>(cpu)];
            if (e.b != rq.gen || rq.mode != Mode::switching) return;
            rq.mode = Mode::running;
            Task* t = rq.curr;
            t->exec_start = engine_.now();
            t->overhead_left += hw_->switch_in(*t, cpu);
            if (t->wake_time >= 0) {
                m_.wake_latency.add(engine_.now() - t->wake_time);
                t->wake_time = -1;
            }
            policy_.on_run(*t, engine_.now());
            if (rq.need_resched) {
                schedule(cpu);
                return;
            }
            run_curr(cpu);
            return;
        }
        case kIpi: {
            Rq& rq = rqs_[static_cast<size_t>(cpu)];
            rq.ipi_in_flight = false;
            if (rq.mode == Mode::running && rq.seg != SegKind::none) {
                // The interrupt steals time from the running task; a preemption it causes takes
                // effect on the way out of the handler.
                stop_segment(cpu);
                rq.curr->overhead_left += prof_.ipi_handler_ns;
                irq_cpu_ = cpu;
                process_wake_list(cpu);
                irq_cpu_ = -1;
                if (rq.need_resched && !prof_.preempt_lazy) {
                    preempt_now(cpu);
                    return;
                }
                run_curr(cpu);
                return;
            }
            process_wake_list(cpu);
            if (rq.mode == Mode::idle && rq.nr_running > 0) schedule(cpu);
            return;
        }
        case kTick:
            on_tick(cpu);
            return;
        case kTimer: {
            Task& t = tasks_[static_cast<size_t>(e.a)];
            const int tcpu = t.cpu >= 0 ? t.cpu : 0;
            driver_->on_timer(e.a, e.b);
            Rq& rq = rqs_[static_cast<size_t>(tcpu)];
            if (rq.mode == Mode::idle && rq.nr_running > 0) kick_cpu(tcpu, hw_->wake_latency(tcpu));
            return;
        }
        case kStart: {
            Task& t = tasks_[static_cast<size_t>(e.a)];
            const int parent = static_cast<int>(e.b);
            // wake_up_new_task(): slow-path placement; __set_task_cpu is not a migration.
            int c = t.nr_cpus_allowed > 1 ? find_dst_cpu(t, parent, parent, WF_FORK) : t.allowed.first();
            if (!t.allowed.test(c)) c = t.allowed.first();
            t.cpu = t.wake_cpu = c;
            t.recent_used_cpu = parent;
            t.pelt.last_update = engine_.now();
            Rq& rq = rqs_[static_cast<size_t>(c)];
            t.vruntime = rq.queue.empty() ? 0 : avg_vruntime(rq);
            t.vlag = 0;
            enqueue(c, t, true);
            t.state = TaskState::runnable;
            update_idle_state(c);
            if (rq.mode == Mode::idle) {
                kick_cpu(c, c == parent ? 0 : prof_.ipi_latency_ns + hw_->wake_latency(c));
            } else if (check_preempt_wakeup(c, t, WF_FORK)) {
                resched(c);
            }
            return;
        }
        default:
            return;
    }
}

// ---------------------------------------------------------------------------------------------
// Load balancing (sched_balance_domains / sched_balance_rq / sched_balance_newidle), simplified
// as docs/model.md describes: group statistics, busiest group and queue, can_migrate_task().

bool Scheduler::can_migrate(const Task& t, int dst, int level) const {
    if (t.state != TaskState::runnable || t.sched_delayed || t.migration_disabled) return false;
    if (!t.allowed.test(dst) || t.per_cpu_kthread) return false;
    const SchedDomain& D = sd_.of(dst).levels[static_cast<size_t>(level)];
    const int failed = rqs_[static_cast<size_t>(dst)].dom[static_cast<size_t>(level)].nr_balance_failed;
    // task_hot(): siblings share every cache; otherwise ran within migration_cost.
    bool hot = false;
    if (t.policy != SchedPolicy::idle && !(D.flags & SD_SHARE_CPUCAPACITY))
        hot = engine_.now() - t.exec_start < cfg_.migration_cost_ns;
    return !hot || failed > D.cache_nice_tries;
}

void Scheduler::move_task(Task& t, int src, int dst, MigrationCause cause) {
    pelt_update_task(t, false, true);
    dequeue(src, t);
    update_idle_state(src);
    set_task_cpu(t, dst, cause);
    enqueue(dst, t, false);
    t.state = TaskState::runnable;
    update_idle_state(dst);
}

bool Scheduler::balance_domain(int cpu, int level, bool newidle) {
    const SchedDomain& D = sd_.of(cpu).levels[static_cast<size_t>(level)];
    Rq& dst = rqs_[static_cast<size_t>(cpu)];
    DomainState& ds = dst.dom[static_cast<size_t>(level)];
    const CpuSet& local = D.groups.front();
    if (!newidle) {
        // should_we_balance(): the first idle CPU of the local group, else its first CPU.
        const CpuSet idle_local = local & idle_mask_;
        const int designated = idle_local.empty() ? local.first() : idle_local.first();
        if (designated != cpu) return false;
    }
    ++m_.c.balance_runs;
    if (level == sd_.of(cpu).sd_llc && !newidle) update_idle_cpu_scan(cpu, level);
    auto runnable = [&](int c) {
        const Rq& r = rqs_[static_cast<size_t>(c)];
        return r.nr_running - r.nr_delayed;
    };
    struct G {
        int nr = 0, cpus = 0, idle = 0;
        double load = 0, cap = 0;
    };
    auto stats = [&](const CpuSet& g) {
        G s;
        for (int c = g.first(); c >= 0; c = g.next(c + 1)) {
            s.nr += runnable(c);
            ++s.cpus;
            s.idle += available_idle_cpu(c) ? 1 : 0;
            s.load += cpu_load(c);
            s.cap += capacity_of(c);
        }
        return s;
    };
    const G l = stats(local);
    int busiest_g = -1;
    G b{};
    for (size_t gi = 1; gi < D.groups.size(); ++gi) {
        G s = stats(D.groups[gi]);
        const bool s_over = s.nr > s.cpus, b_over = b.nr > b.cpus;
        if (busiest_g < 0 || (s_over && !b_over) ||
            (s_over == b_over && s.load / s.cap > b.load / b.cap) ||
            (s_over == b_over && s.load / s.cap == b.load / b.cap && s.nr > b.nr)) {
            busiest_g = static_cast<int>(gi);
            b = s;
        }
    }
    bool moved = false;
    if (busiest_g >= 0 && b.nr > 0) {
        // Migration type: tasks when the local group has spare CPUs; load otherwise.
        const bool local_spare = l.nr < l.cpus;
        int to_move = 0;
        if (local_spare) {
            if (b.nr > b.cpus || b.nr > l.nr + 1) to_move = std::max(1, (b.nr - l.nr) / 2);
        } else {
            const double bl = b.load / b.cap, ll = l.load / l.cap;
            if (bl * 100 > ll * D.imbalance_pct && b.nr > b.cpus) to_move = 1;
        }
        if (to_move > 0) {
            // The busiest runqueue of the busiest group.
            const CpuSet& g = D.groups[static_cast<size_t>(busiest_g)];
            int src = -1;
            for (int c = g.first(); c >= 0; c = g.next(c + 1))
                if (src < 0 || runnable(c) > runnable(src)) src = c;
            if (src >= 0 && runnable(src) >= 2) {
                Rq& srq = rqs_[static_cast<size_t>(src)];
                int looked = 0;
                for (size_t i = srq.queue.size(); i-- > 0 && to_move > 0 && looked < 32;) {
                    ++looked;
                    Task* t = srq.queue[i];
                    if (t == srq.curr || !can_migrate(*t, cpu, level)) continue;
                    move_task(*t, src, cpu, newidle ? MigrationCause::newidle : MigrationCause::balance);
                    moved = true;
                    --to_move;
                }
            }
        }
    }
    if (!newidle) {
        if (moved) {
            ds.nr_balance_failed = 0;
            ds.balance_interval_ms = D.min_interval_ms;
        } else {
            if (busiest_g >= 0 && b.nr > b.cpus) ++ds.nr_balance_failed;
            ds.balance_interval_ms = std::min<int64_t>(ds.balance_interval_ms * 2, D.max_interval_ms);
        }
    }
    return moved;
}

// update_idle_cpu_scan(): SIS_UTIL's scan depth from the LLC's average utilisation.
void Scheduler::update_idle_cpu_scan(int cpu, int level) {
    const SchedDomain& D = sd_.of(cpu).levels[static_cast<size_t>(level)];
    const int weight = D.span_weight();
    double sum = 0;
    for (int c = D.span.first(); c >= 0; c = D.span.next(c + 1)) sum += cpu_util(c);
    const auto x = static_cast<int64_t>(sum / weight);
    const int64_t pct = D.imbalance_pct;
    const int64_t t = std::min<int64_t>(1024, x * x * pct * pct / (10000 * 1024));
    const int64_t y = 1024 - t;
    llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)].nr_idle_scan = static_cast<int>(y * weight / 1024);
}

void Scheduler::periodic_balance(int cpu, bool idle) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    const Time now = engine_.now();
    const auto& levels = sd_.of(cpu).levels;
    Time next = now + 60 * kNsPerSec;
    const bool busy = !idle && !sched_idle_cpu(cpu);
    for (size_t i = 0; i < levels.size(); ++i) {
        DomainState& ds = rq.dom[i];
        Time interval = ds.balance_interval_ms * (busy ? levels[i].busy_factor : 1) * kNsPerMs - (busy ? tick_ns_ : 0);
        interval = std::max(interval, tick_ns_);
        if (now >= ds.last_balance + interval) {
            balance_domain(cpu, static_cast<int>(i), false);
            ds.last_balance = now;
            interval = ds.balance_interval_ms * (busy ? levels[i].busy_factor : 1) * kNsPerMs - (busy ? tick_ns_ : 0);
            interval = std::max(interval, tick_ns_);
        }
        next = std::min(next, ds.last_balance + interval);
    }
    rq.next_balance = next;
}

// nohz_balancer_kick(): a busy CPU with queued work asks an idle CPU to balance for the idle ones.
void Scheduler::kick_idle_balance(int busy_cpu) {
    const CpuSet idle = idle_mask_ & topo_.all();
    if (idle.empty()) return;
    const int ilb = idle.next_wrap(busy_cpu + 1 >= topo_.nr_cpus() ? 0 : busy_cpu + 1);
    Rq& rq = rqs_[static_cast<size_t>(ilb)];
    if (engine_.now() < rq.next_balance) return;
    periodic_balance(ilb, true);
    if (rq.mode == Mode::idle && rq.nr_running > 0) {
        rq.idle_stamp = 0;
        kick_cpu(ilb, prof_.ipi_latency_ns + hw_->wake_latency(ilb));
    }
}

bool Scheduler::newidle_balance(int cpu) {
    Rq& rq = rqs_[static_cast<size_t>(cpu)];
    if (rq.ttwu_pending) return false;
    const auto& levels = sd_.of(cpu).levels;
    if (levels.empty()) return false;
    const bool overloaded = nr_overloaded_ > 0;
    if (!overloaded || rq.avg_idle < rq.dom[0].max_newidle_lb_cost) return false;
    int64_t cost = 0;
    bool pulled = false;
    for (size_t i = 0; i < levels.size(); ++i) {
        DomainState& ds = rq.dom[i];
        if (rq.avg_idle < cost + ds.max_newidle_lb_cost) break;
        if (levels[i].flags & SD_BALANCE_NEWIDLE) {
            if (cfg_.features.on(Feat::NI_RANDOM) &&
                rng_balance_.below(1024) > static_cast<uint64_t>(ds.newidle_ratio))
                continue;
            ++m_.c.newidle_runs;
            pulled = balance_domain(cpu, static_cast<int>(i), true);
            const int64_t t = prof_.newidle_balance_ns;
            cost += t;
            ds.max_newidle_lb_cost = std::max(ds.max_newidle_lb_cost, t);
            ds.newidle_ratio = (ds.newidle_ratio * 7 + (pulled ? 1024 : 0)) / 8;
        }
        if (pulled) break;
    }
    rq.max_idle_balance_cost = std::max(rq.max_idle_balance_cost, cost);
    return pulled;
}

bool Scheduler::explain_this() const { return explain_ && select_calls_ == explain_nth_; }

void Scheduler::check_invariants() const {
    std::vector<int> seen(tasks_.size(), 0);
    for (size_t c = 0; c < rqs_.size(); ++c) {
        const Rq& rq = rqs_[c];
        int delayed = 0;
        for (const Task* t : rq.queue) {
            if (seen[static_cast<size_t>(t->id)]++) throw std::logic_error("task " + t->comm + " queued on two CPUs");
            if (t->cpu != static_cast<int>(c)) throw std::logic_error("task " + t->comm + " queued on cpu" + std::to_string(c) + " but task_cpu is " + std::to_string(t->cpu));
            if (!t->on_rq) throw std::logic_error("queued task " + t->comm + " not on_rq");
            delayed += t->sched_delayed ? 1 : 0;
        }
        if (static_cast<int>(rq.queue.size()) != rq.nr_running) throw std::logic_error("nr_running mismatch on cpu" + std::to_string(c));
        if (delayed != rq.nr_delayed) throw std::logic_error("nr_delayed mismatch on cpu" + std::to_string(c));
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
}

}  // namespace wakesim
