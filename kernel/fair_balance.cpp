// kernel/sched/fair.c, load balancing, in fair.c's order: can_migrate_task, detach/attach
// (move_task), update_idle_cpu_scan, sched_balance_rq (group statistics, busiest group and queue),
// sched_balance_domains, nohz_balancer_kick, sched_balance_newidle. Simplified as docs/model.md
// describes.
#include <algorithm>

#include "kernel/pelt.h"
#include "kernel/sched.h"

namespace wakesim {

bool Scheduler::can_migrate_task(const Task& t, int dst, int level) const {
    if (t.state != TaskState::runnable || t.sched_delayed || t.migration_disabled) return false;
    if (!t.allowed.test(dst) || t.per_cpu_kthread) return false;
    const SchedDomain& D = sd_.of(dst).levels[static_cast<size_t>(level)];
    const int failed = rq_of(dst).dom[static_cast<size_t>(level)].nr_balance_failed;
    // task_hot(): siblings share every cache; otherwise ran within migration_cost.
    bool hot = false;
    if (t.policy != SchedPolicy::idle && !(D.flags & SD_SHARE_CPUCAPACITY))
        hot = engine_.now() - t.exec_start < cfg_.migration_cost_ns ||
              // CACHE_HOT_BUDDY: the next buddy is hot while the destination has work
              (cfg_.features.on(Feat::CACHE_HOT_BUDDY) && rq_of(dst).nr_running > 0 && rq_of(t.cpu).next_buddy == &t);
    return !hot || failed > D.cache_nice_tries;
}

// detach_task() + attach_task().
void Scheduler::move_task(Task& t, int src, int dst, MigrationCause cause) {
    pelt_update_task(t, false, true);
    dequeue(src, t);
    update_idle_state(src);
    set_task_cpu(t, dst, cause);
    enqueue(dst, t, false);
    t.state = TaskState::runnable;
    update_idle_state(dst);
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

bool Scheduler::sched_balance_rq(int cpu, int level, bool newidle) {
    const SchedDomain& D = sd_.of(cpu).levels[static_cast<size_t>(level)];
    Rq& dst = rq_of(cpu);
    DomainState& ds = dst.dom[static_cast<size_t>(level)];
    const CpuSet& local = D.groups.front();
    if (!newidle) {
        // should_we_balance(): the first idle CPU of the local group, else its first CPU.
        const CpuSet idle_local = local & idle_mask_;
        const int designated = idle_local.empty() ? local.first() : idle_local.first();
        if (designated != cpu) return false;
    }
    if (level == sd_.of(cpu).sd_llc && !newidle) update_idle_cpu_scan(cpu, level);
    auto runnable = [&](int c) {
        const Rq& r = rq_of(c);
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
                Rq& srq = rq_of(src);
                int looked = 0;
                for (size_t i = srq.queue.size(); i-- > 0 && to_move > 0 && looked < 32;) {
                    ++looked;
                    Task* t = srq.queue[i];
                    if (t == srq.curr || !can_migrate_task(*t, cpu, level)) continue;
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
    if (wants(kObsBalance)) obs_->balance(cpu, level, newidle, moved);
    return moved;
}

void Scheduler::sched_balance_domains(int cpu, bool idle) {
    Rq& rq = rq_of(cpu);
    const Time now = engine_.now();
    const auto& levels = sd_.of(cpu).levels;
    Time next = now + 60 * kNsPerSec;
    const bool busy = !idle && !sched_idle_cpu(cpu);
    for (size_t i = 0; i < levels.size(); ++i) {
        DomainState& ds = rq.dom[i];
        Time interval = ds.balance_interval_ms * (busy ? levels[i].busy_factor : 1) * kNsPerMs - (busy ? tick_ns_ : 0);
        interval = std::max(interval, tick_ns_);
        if (now >= ds.last_balance + interval) {
            sched_balance_rq(cpu, static_cast<int>(i), false);
            ds.last_balance = now;
            interval = ds.balance_interval_ms * (busy ? levels[i].busy_factor : 1) * kNsPerMs - (busy ? tick_ns_ : 0);
            interval = std::max(interval, tick_ns_);
        }
        next = std::min(next, ds.last_balance + interval);
    }
    rq.next_balance = next;
}

// nohz_balancer_kick(): a busy CPU with queued work asks an idle CPU to balance for the idle ones.
void Scheduler::nohz_balancer_kick(int busy_cpu) {
    const CpuSet idle = idle_mask_ & topo_.all();
    if (idle.empty()) return;
    const int ilb = idle.next_wrap(busy_cpu + 1 >= topo_.nr_cpus() ? 0 : busy_cpu + 1);
    Rq& rq = rq_of(ilb);
    if (engine_.now() < rq.next_balance) return;
    sched_balance_domains(ilb, true);
    if (!rq.curr && rq.nr_running > 0) {
        rq.idle_stamp = 0;
        arch_->kick_idle_cpu(ilb, busy_cpu, IdleKick::nohz_balance, nullptr);
    }
}

bool Scheduler::sched_balance_newidle(int cpu) {
    Rq& rq = rq_of(cpu);
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
            if (cfg_.features.on(Feat::NI_RANDOM) && rng_balance_.below(1024) > static_cast<uint64_t>(ds.newidle_ratio))
                continue;
            pulled = sched_balance_rq(cpu, static_cast<int>(i), true);
            // The time the pass took (the profile's measure of it) bounds the next attempts.
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

}  // namespace wakesim
