// kernel/sched/pelt.c: the table (the task's and the CPU's updates and the arithmetic are inline
// in kernel/pelt.h); migrate_task_rq_fair()'s detach and attach of a task's signals, with
// a grouped task's removal left pending until update_blocked_averages() or its group's next update
// on that CPU; then fair.c's readers of the signals: cpu_util(), cpu_load(), task_util_est(),
// task_h_load(), task_fits_cpu() and util_fits_cpu(). A CPU's readers see its signals as last
// updated (READ_ONCE(cfs_rq->avg.*)): an idle CPU's stay where they were until
// update_blocked_averages() runs for it; pending removals still count.
#include <algorithm>
#include <cmath>

#include "kernel/pelt.h"
#include "kernel/sched.h"

namespace wakesim {

namespace pelt {

namespace {

// Documentation/scheduler/sched-pelt.c's recipe: floor((2^32 - 1) * y^n), y = (1/2)^(1/32).
std::array<uint32_t, kLoadAvgPeriod> make_yn_inv() {
    std::array<uint32_t, kLoadAvgPeriod> t{};
    const double y = std::pow(0.5, 1.0 / kLoadAvgPeriod);
    for (uint32_t n = 0; n < kLoadAvgPeriod; ++n)
        t[n] = static_cast<uint32_t>(4294967295.0 * std::pow(y, static_cast<double>(n)));
    return t;
}

}  // namespace

const std::array<uint32_t, kLoadAvgPeriod> kYNInv = make_yn_inv();

}  // namespace pelt

namespace {

// __update_load_avg_blocked_se(): a sleeping task's signals decayed to `to` (its runqueue's last
// update), if that is later. True when a period ended, so util_avg was recomputed.
bool sync_blocked_se(Pelt& s, Time to, uint64_t weight) {
    return to > s.last_update && pelt::update(s, to, 0, 0, false, 1024, weight);
}

// A pending removal brought to the periods the CPU's signal has decayed through since it was
// recorded: the kernel subtracts it before that decay (update_cfs_rq_load_avg()), the same amount.
void pelt_decay_removed(PeltRemoved& r, Time last_update) {
    if (last_update <= r.stamp) return;
    const uint64_t d = static_cast<uint64_t>((last_update - r.stamp) >> 10) + r.period_contrib;
    const uint64_t periods = d / 1024;
    r.stamp = last_update;
    r.period_contrib = static_cast<uint32_t>(d % 1024);
    if (!periods) return;
    const double f = static_cast<double>(pelt::decay_load(uint64_t{1} << 32, periods)) / 4294967296.0;
    r.util_avg *= f;
    r.runnable_avg *= f;
    r.load_avg *= f;
    r.rm_util_avg *= f;
    r.rm_runnable_avg *= f;
    r.rm_load_avg *= f;
    r.util_sum = pelt::decay_load(r.util_sum, periods);
    r.runnable_sum = pelt::decay_load(r.runnable_sum, periods);
    r.load_sum = pelt::decay_load(r.load_sum, periods);
}

// sub_positive() of one signal's average and sum, then the sum kept at least avg *
// PELT_MIN_DIVIDER (as dequeue_load_avg() and update_cfs_rq_load_avg()'s removal do).
void pelt_sub_signal(double& avg, uint64_t& sum, double by_avg, uint64_t by_sum) {
    avg = std::max(0.0, avg - by_avg);
    sum = sum > by_sum ? sum - by_sum : 0;
    sum = std::max(sum, static_cast<uint64_t>(avg) * pelt::kMinDivider);
}

// A removed contribution, decayed to the runqueue's last update, off its three signals; a
// wakeup's removal takes avg x divider off the sums (update_cfs_rq_load_avg()).
void pelt_subtract(Pelt& from, PeltRemoved r) {
    pelt_decay_removed(r, from.last_update);
    const uint64_t div = pelt::divider(from);
    auto by_div = [div](double avg) { return static_cast<uint64_t>(avg) * div; };
    pelt_sub_signal(from.util_avg, from.util_sum, r.util_avg, r.util_sum + by_div(r.rm_util_avg));
    pelt_sub_signal(from.runnable_avg, from.runnable_sum, r.runnable_avg, r.runnable_sum + by_div(r.rm_runnable_avg));
    pelt_sub_signal(from.load_avg, from.load_sum, r.load_avg, r.load_sum + by_div(r.rm_load_avg));
}

}  // namespace

// migrate_task_rq_fair(): a wakeup's remove_entity_load_avg() (the averages, whose sums come off
// as avg x divider), or a balancer's detach_entity_load_avg() (the task's own sums), from `from`
// (for a task in a group, queued on the group's runqueue there, whose next update subtracts it),
// then attach_entity_load_avg() to `to`: a balancer's at once, a wakeup's at its enqueue there
// (after the wake list's IPI), when the task's sums are realigned to the new CPU's period.
void Scheduler::pelt_migrate(Task& p, int from_cpu, int to_cpu, bool wakeup) {
    Pelt& se = p.pelt;
    const auto w = static_cast<uint64_t>(p.weight);
    PeltRemoved r{p.group, se.util_avg, se.runnable_avg, se.load_avg, se.util_sum, se.runnable_sum, w * se.load_sum};
    r.stamp = se.last_update;
    r.period_contrib = se.period_contrib;
    if (wakeup) {  // remove_entity_load_avg(): the averages only
        r.util_sum = r.runnable_sum = r.load_sum = 0;
        r.rm_util_avg = se.util_avg;
        r.rm_runnable_avg = se.runnable_avg;
        r.rm_load_avg = se.load_avg;
    }
    if (p.group < 0) {
        pelt_subtract(rq_of(from_cpu).pelt, r);
        rq_of(from_cpu).util_decayed = true;  // the removed load: `decayed` at its next update
    } else {
        auto& pending = rq_of(from_cpu).removed;
        auto it = std::find_if(pending.begin(), pending.end(), [&](const PeltRemoved& q) { return q.group == p.group; });
        if (it == pending.end()) {
            pending.push_back(r);  // capacity reserved for every group at start
        } else {
            pelt_decay_removed(*it, r.stamp);
            it->add(r);
        }
    }
    if (wakeup)
        se.attach_pending = true;  // enqueue() attaches it
    else
        pelt_attach(p, to_cpu);
}

// attach_entity_load_avg(): the task's sums rebuilt from its averages at the CPU's period (what
// it ran since its last period boundary is not carried), then added to the CPU's signals, which
// the caller has brought up to date. A grouped task's load joins its group's runqueue, and reaches
// the root only through the group's entity (add_tg_cfs_propagate()); its utilisation is added to
// the CPU's at once, which the kernel's exact propagation of util_avg and runnable_avg amounts to.
void Scheduler::pelt_attach(Task& p, int cpu) {
    p.pelt.attach_pending = false;
    Pelt& to = rq_of(cpu).pelt;
    rq_of(cpu).util_decayed = true;  // attach_entity_load_avg() -> cfs_rq_util_change()
    Pelt& se = p.pelt;
    const auto w = static_cast<uint64_t>(p.weight);
    const uint32_t div = pelt::divider(to);
    se.last_update = to.last_update;
    se.period_contrib = to.period_contrib;
    se.util_sum = static_cast<uint64_t>(se.util_avg) * div;
    se.runnable_sum = static_cast<uint64_t>(se.runnable_avg) * div;
    se.load_sum = static_cast<uint64_t>(se.load_avg) * div;
    se.load_sum = w < se.load_sum ? se.load_sum / w : 1;
    to.util_avg += se.util_avg;
    to.util_sum += se.util_sum;
    to.runnable_avg += se.runnable_avg;
    to.runnable_sum += se.runnable_sum;
    if (p.group < 0) {
        to.load_avg += se.load_avg;
        to.load_sum += w * se.load_sum;
        return;
    }
    // The task's own runqueue is its group's here: attach_entity_load_avg() there, then
    // update_tg_load_avg().
    pelt_sync_group(cpu, p.group);
    GroupCpu& gc = groups_[static_cast<size_t>(p.group)].cpu[static_cast<size_t>(cpu)];
    gc.avg.load_avg += se.load_avg;
    gc.avg.load_sum += static_cast<uint64_t>(se.load_avg) * pelt::divider(gc.avg);
    gc.avg.util_avg += se.util_avg;
    gc.avg.util_sum += static_cast<uint64_t>(se.util_avg) * pelt::divider(gc.avg);
    gc.prop_runnable_sum += static_cast<int64_t>(se.load_sum);  // add_tg_cfs_propagate()
    gc.propagate = true;
    update_tg_load_avg(cpu, p.group);
}

// post_init_entity_util_avg(), once wake_up_new_task() has chosen `cpu` (after its
// init_entity_runnable_average()): util_avg extrapolated from the task's runqueue there (util_avg
// x weight / (load_avg + 1)), at most half the capacity that runqueue leaves, runnable_avg the
// same; the enqueue attaches them. The runqueue is cfs_rq_of(se): the root's, as last updated
// (wake_up_new_task() updates it only at the enqueue, after this);
// for a grouped task its group's on that CPU, whose utilisation the model does not keep (only
// its load): the group's tasks there are summed, decayed to now.
void Scheduler::post_init_entity_util_avg(Task& p, int cpu) {
    double rq_util = 0, rq_load = 0;
    if (p.group < 0) {
        const Pelt& s = rq_of(cpu).pelt;
        rq_util = s.util_avg;
        rq_load = s.load_avg;
    } else {
        for (const Task& t : tasks_) {
            if (&t == &p || t.group != p.group || t.cpu != cpu || t.state == TaskState::unstarted || t.state == TaskState::exited) continue;
            const Pelt s = task_pelt_now(t);
            rq_util += s.util_avg;
            rq_load += s.load_avg;
        }
    }
    Pelt& sa = p.pelt;
    const auto cap = (static_cast<int64_t>(capacity_of(cpu)) - static_cast<int64_t>(rq_util)) / 2;
    if (cap > 0) {
        double u = static_cast<double>(cap);
        if (static_cast<int64_t>(rq_util) != 0) {
            u = static_cast<double>(static_cast<uint64_t>(rq_util) * p.weight / (static_cast<uint64_t>(rq_load) + 1));
            u = std::min(u, static_cast<double>(cap));
        }
        sa.util_avg = u;
    }
    sa.runnable_avg = sa.util_avg;
}

bool Scheduler::pelt_apply_removed(int cpu, int group) {
    auto& pending = rq_of(cpu).removed;
    bool removed = false;
    for (auto it = pending.begin(); it != pending.end();) {
        if (it->group != group) {
            ++it;
            continue;
        }
        // The root loses the task's utilisation at once; its load leaves the group's runqueue, and
        // the root through the group's entity: add_tg_cfs_propagate() of the removed runnable
        // average, as a sum at the group runqueue's period (the unweighted removed load).
        PeltRemoved util_only = *it;
        util_only.load_avg = 0;
        util_only.load_sum = 0;
        util_only.rm_load_avg = 0;
        pelt_subtract(rq_of(cpu).pelt, util_only);
        GroupCpu& gc = groups_[static_cast<size_t>(group)].cpu[static_cast<size_t>(cpu)];
        gc.prop_runnable_sum += -static_cast<int64_t>(static_cast<uint64_t>(it->runnable_avg) * pelt::divider(gc.avg)) >> 10;
        gc.propagate = true;
        pelt_subtract(gc.avg, *it);
        it = pending.erase(it);
        removed = true;
    }
    if (removed) rq_of(cpu).util_decayed = true;  // update_cfs_rq_load_avg(): removed.nr makes it `decayed`
    return removed;
}

// update_cfs_rq_load_avg() of the group's runqueue: the removed load off, the load and the
// utilisation (while one of its tasks runs here) decayed to now; true if either changed it.
// update_load_avg(cfs_rq, se, UPDATE_TG) then calls update_tg_load_avg().
bool Scheduler::pelt_sync_group(int cpu, int group) {
    GroupCpu& gc = groups_[static_cast<size_t>(group)].cpu[static_cast<size_t>(cpu)];
    const bool removed = pelt_apply_removed(cpu, group);
    const Rq& rq = rq_of(cpu);
    const bool running = rq.curr && rq.curr->group == group;
    const uint32_t scale = running ? hw_.invariant_scale(cpu) : 0;
    return pelt::update(gc.avg, engine_.now(), gc.q.load_weight, 0, running, scale, 1) || removed;
}

void Scheduler::pelt_update_group(int cpu, int group) {
    if (pelt_sync_group(cpu, group)) update_tg_load_avg(cpu, group);
    pelt_update_gse(cpu, group);
}

// __update_load_avg_se() of the group's entity (load while it is on the root's queue, util while
// one of its tasks runs here), then propagate_entity_load_avg() when a task was attached to or
// removed from the group's runqueue: update_tg_cfs_util() gives the entity its runqueue's
// utilisation, and update_tg_cfs_load() changes its load_sum, and the root's load by as much.
// (The root's utilisation is not touched: the model adds a grouped task's to it directly.) The
// root's signals are current (the callers update them first).
void Scheduler::pelt_update_gse(int cpu, int group) {
    GroupCpu& gc = groups_[static_cast<size_t>(group)].cpu[static_cast<size_t>(cpu)];
    Pelt& se = gc.se_avg;
    const SchedEntity& g = gc.se;
    // Nothing to decay or propagate (skip_blocked_update()): the update would change no signal.
    if (!g.on_rq && !gc.propagate && se.load_sum == 0 && se.util_sum == 0 && se.load_avg == 0 && se.util_avg == 0)
        return;
    Rq& rq = rq_of(cpu);
    const bool running = rq.curr && rq.curr->group == group;
    const uint32_t scale = running ? hw_.invariant_scale(cpu) : 0;
    pelt::update(se, engine_.now(), g.on_rq ? 1 : 0, 0, running, scale, g.weight);
    if (!gc.propagate) return;
    gc.propagate = false;
    Pelt& root = rq.pelt;
    const uint32_t div = pelt::divider(root);
    if (se.util_avg != gc.avg.util_avg) {  // update_tg_cfs_util()
        se.util_avg = gc.avg.util_avg;
        se.util_sum = static_cast<uint64_t>(se.util_avg) * div;
    }
    const int64_t prop = gc.prop_runnable_sum;
    if (prop == 0) return;
    gc.prop_runnable_sum = 0;
    uint64_t runnable_sum;
    if (prop > 0) {
        runnable_sum = std::min<uint64_t>(static_cast<uint64_t>(prop) + se.load_sum, div);
    } else {
        // Removed: the group's runqueue's new runnable time, assuming its tasks equally runnable.
        const uint64_t rq_sum = gc.q.load_weight ? gc.avg.load_sum / gc.q.load_weight : 0;
        runnable_sum = std::min(se.load_sum, rq_sum);
    }
    runnable_sum = std::max(runnable_sum, se.util_sum >> 10);  // never below its running time
    const uint64_t w = g.weight;
    const uint64_t load_sum = w * runnable_sum;
    const auto load_avg = static_cast<double>(load_sum / div);
    const double delta_avg = load_avg - se.load_avg;
    if (delta_avg == 0) return;
    const auto delta_sum = static_cast<int64_t>(load_sum) - static_cast<int64_t>(w * se.load_sum);
    se.load_sum = runnable_sum;
    se.load_avg = load_avg;
    root.load_avg = std::max(0.0, root.load_avg + delta_avg);  // add_positive()
    root.load_sum = delta_sum < 0 && static_cast<uint64_t>(-delta_sum) > root.load_sum
                        ? 0
                        : static_cast<uint64_t>(static_cast<int64_t>(root.load_sum) + delta_sum);
    root.load_sum = std::max(root.load_sum, static_cast<uint64_t>(root.load_avg) * pelt::kMinDivider);
}

// reweight_entity(): dequeue_load_avg() takes the entity's load off the root's, its load_avg is
// recomputed at the new weight from its unweighted sum, and enqueue_load_avg() adds it back; on
// the queue, the root's load.weight follows.
void Scheduler::reweight_gse_load(int cpu, int group, uint32_t w) {
    GroupCpu& gc = groups_[static_cast<size_t>(group)].cpu[static_cast<size_t>(cpu)];
    Pelt& se = gc.se_avg;
    Rq& rq = rq_of(cpu);
    Pelt& root = rq.pelt;
    const uint64_t old_w = gc.se.weight;
    pelt_sub_signal(root.load_avg, root.load_sum, se.load_avg, old_w * se.load_sum);
    se.load_avg = static_cast<double>(w * se.load_sum / pelt::divider(se));
    root.load_avg += se.load_avg;
    root.load_sum += w * se.load_sum;
    if (gc.se.on_rq) rq.cfs.load_weight = rq.cfs.load_weight - old_w + w;
}

// update_tg_load_avg(): the runqueue's part of tg->load_avg follows its load when that moved by
// more than 1/64 of the part, at most once a millisecond ("sched/fair: Ratelimit update to
// tg->load_avg", Linux 6.7).
void Scheduler::update_tg_load_avg(int cpu, int group) {
    TaskGroupState& tg = groups_[static_cast<size_t>(group)];
    GroupCpu& gc = tg.cpu[static_cast<size_t>(cpu)];
    const Time now = engine_.now();
    if (now - gc.tg_stamp < kNsPerMs) return;
    const double delta = gc.avg.load_avg - gc.tg_contrib;
    if (std::abs(delta) <= std::floor(gc.tg_contrib / 64)) return;
    tg.load_avg += delta;
    gc.tg_contrib = gc.avg.load_avg;
    gc.tg_stamp = now;
}

// update_blocked_averages(): every runqueue of the CPU brought up to date, removed contributions
// subtracted (only grouped tasks leave them pending), each group's part of its tg->load_avg
// refreshed.
void Scheduler::update_blocked_averages(int cpu) {
    Rq& rq = rq_of(cpu);
    rq.last_blocked_load_update_tick = jiffies();  // update_blocked_load_tick()
    pelt_update_cpu(cpu);
    for (size_t g = 0; g < groups_.size(); ++g) pelt_update_group(cpu, static_cast<int>(g));
    cpufreq_update_util(cpu);  // sched_balance_update_blocked_averages(): if decayed
    // update_blocked_load_status(): cleared once every sum reached zero (cfs_rq_is_decayed()).
    bool blocked = rq.pelt.load_sum || rq.pelt.util_sum || rq.pelt.runnable_sum || !rq.removed.empty();
    for (const TaskGroupState& tg : groups_)
        if (tg.cpu[static_cast<size_t>(cpu)].avg.load_sum) blocked = true;
    if (!blocked) rq.has_blocked_load = false;
}

// cpu_util_cfs() = cpu_util(cpu, NULL, -1, 0), inline in kernel/sched.h: util_avg raised, with
// UTIL_EST, to the runnable tasks' util_est (a task just woken counts in full at once); capped at
// the CPU's capacity. The load balancer's group statistics, fork placement, SIS_UTIL's scan depth
// and cpu_overutilized() read it.
// cpu_util_cfs_boost() = cpu_util(cpu, NULL, -1, 1), schedutil's input (sugov_get_util()):
// util_avg raised to runnable_avg ("runnable boosting": tasks waiting on the CPU ask for a higher
// clock) and, with UTIL_EST, to the enqueued tasks' util_est; capped at the CPU's capacity.
double Scheduler::cpu_util_cfs_boost(int cpu) const {
    if (!prof_.runnable_boost) return cpu_util(cpu);  // before Linux 6.5: cpu_util_cfs()
    const Pelt& s = rq_of(cpu).pelt;
    double u = std::max(s.util_avg, s.runnable_avg);
    if (cfg_.features.on(Feat::UTIL_EST)) u = std::max(u, rq_of(cpu).util_est);
    return std::min<double>(u, capacity_of(cpu));
}

// The task's signals as an update now would leave them (a copy: the task is not touched), at the
// scale pelt_update_task() uses. The kernel's readers never see this: they read the signals as
// last updated.
Pelt Scheduler::task_pelt_now(const Task& t) const {
    const bool running = t.state == TaskState::running;
    const bool runnable = running || t.state == TaskState::runnable;
    const uint32_t scale = t.cpu >= 0 ? hw_.invariant_scale(t.cpu) : 1024;
    Pelt s = t.pelt;
    pelt::update(s, engine_.now(), runnable || t.sched_delayed ? 1 : 0, runnable ? 1 : 0, running, scale, t.weight);
    return s;
}

// sync_entity_load_avg(): a sleeping task's signals decayed to its runqueue's last update (the
// root's, or its group's there), not to now; the wake path's EAS and asymmetric-capacity choices
// read them so.
Pelt Scheduler::wakee_pelt_synced(const Task& p) const {
    if (p.state != TaskState::sleeping && p.state != TaskState::waking) return task_pelt_now(p);
    const Pelt& rq = cfs_rq_avg(p);
    Pelt s = p.pelt;
    sync_blocked_se(s, rq.last_update, p.weight);
    return s;
}

// cfs_rq_of(&p->se)->avg on the task's CPU: the root's, or its group's there.
const Pelt& Scheduler::cfs_rq_avg(const Task& p) const {
    return p.group < 0 ? rq_of(p.cpu).pelt : groups_[static_cast<size_t>(p.group)].cpu[static_cast<size_t>(p.cpu)].avg;
}

// migrate_task_rq_fair() of a waking task: remove_entity_load_avg()'s sync_entity_load_avg()
// decays it to its runqueue's last update, not to now (the time after that is never accounted:
// the attach re-anchors it at the new runqueue's); migrate_se_pelt_lag() decays it on to about
// now where the CPU it leaves is idle.
void Scheduler::pelt_sync_leaving(Task& p) {
    if (!rq_of(p.cpu).curr) {
        pelt_update_task(p, false, false);
        return;
    }
    if (sync_blocked_se(p.pelt, cfs_rq_avg(p).last_update, p.weight))
        p.pelt.util_avg_unchanged = false;  // cfs_se_util_change()
}

double Scheduler::task_util_est(const Task& t, double util_avg) const {
    return cfg_.features.on(Feat::UTIL_EST) ? std::max(util_avg, t.pelt.util_est) : util_avg;
}

double Scheduler::wakee_util(const Task& p) const { return task_util_est(p, wakee_pelt_synced(p).util_avg); }

// task_util(): READ_ONCE(p->se.avg.util_avg), as last updated (a running task's at its pick or
// tick, a queued one's at its enqueue or preemption, a sleeper's at its sleep).
double Scheduler::task_util(const Task& t) const { return task_util_est(t, t.pelt.util_avg); }

// task_h_load() (CONFIG_FAIR_GROUP_SCHED): the task's load as last updated (the wake path does not
// sync a wakee before wake_affine_weight()) times its runqueue's h_load over that runqueue's load.
// update_cfs_rq_h_load() computes h_load once a jiffy: the root's is its load then, a group's the
// root's h_load times the group entity's share of the root's load.
double Scheduler::task_load(const Task& t) const {
    if (t.cpu < 0) return t.pelt.load_avg;
    const Rq& rq = rq_of(t.cpu);
    const int64_t now = jiffies();
    const auto root_load = static_cast<uint64_t>(rq.pelt.load_avg);
    const auto root_h_load = [&] {
        if (rq.h_load_jiffy != now) {
            rq.h_load = static_cast<double>(root_load);
            rq.h_load_jiffy = now;
        }
        return static_cast<uint64_t>(rq.h_load);
    };
    const auto load = static_cast<uint64_t>(t.pelt.load_avg);
    if (t.group < 0) return static_cast<double>(load * root_h_load() / (root_load + 1));
    const GroupCpu& gc = groups_[static_cast<size_t>(t.group)].cpu[static_cast<size_t>(t.cpu)];
    if (gc.h_load_jiffy != now) {
        gc.h_load = static_cast<double>(root_h_load() * static_cast<uint64_t>(gc.se_avg.load_avg) / (root_load + 1));
        gc.h_load_jiffy = now;
    }
    return static_cast<double>(load * static_cast<uint64_t>(gc.h_load) / (static_cast<uint64_t>(gc.avg.load_avg) + 1));
}

// util_fits_cpu(), v6.19: fits_capacity(util, capacity) (util < 80% of capacity), then with
// uclamp: a uclamp_max at or below the CPU's original capacity makes any util fit (except the
// unclamped 1024 on a 1024 CPU, which must not hide overutilization), and a util boosted by a
// uclamp_min (capped at uclamp_max) above the CPU's capacity fits only the util, not the hint:
// -1. No capacity pressure is modelled: capacity_of() = arch_scale_cpu_capacity() =
// get_actual_cpu_capacity().
int Scheduler::util_fits_cpu(double util, int uclamp_min, int uclamp_max, int cpu) const {
    const int cap = capacity_of(cpu);
    bool fits = util * 1280.0 < cap * 1024.0;
    if (!uclamp_used_) return fits ? 1 : 0;
    const bool unclamped_max = cap == 1024 && uclamp_max == 1024;
    fits = fits || (!unclamped_max && uclamp_max <= cap);
    uclamp_min = std::min(uclamp_min, uclamp_max);
    if (fits && util < uclamp_min && uclamp_min > cap) return -1;
    return fits ? 1 : 0;
}

// task_fits_cpu(): util_fits_cpu() of task_util_est() with the task's clamps, fully (> 0).
bool Scheduler::task_fits_cpu(const Task& t, int cpu) const {
    if (!uclamp_used_) return task_util(t) * 1280.0 < capacity_of(cpu) * 1024.0;
    return util_fits_cpu(task_util(t), t.uclamp_min, t.uclamp_max, cpu) > 0;
}

}  // namespace wakesim
