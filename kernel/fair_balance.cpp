// kernel/sched/fair.c (v6.19), load balancing, in fair.c's order: task_hot, can_migrate_task,
// detach_tasks/attach_tasks (move_task), update_idle_cpu_scan, the group statistics and
// classification (update_sg_lb_stats, group_classify, update_sd_pick_busiest), calculate_imbalance,
// sched_balance_find_src_group, sched_balance_find_src_rq, need_active_balance, sched_balance_rq,
// active_load_balance_cpu_stop, update_newidle_cost, sched_balance_domains, the NOHZ idle balance
// and sched_balance_newidle. docs/model.md lists what is left out.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernel/fair_balance.h"
#include "kernel/pelt.h"
#include "kernel/sched.h"

namespace wakesim {

namespace {

constexpr int kNrMigrate = 32;            // sysctl_sched_nr_migrate
constexpr int kNrMigrateBreak = 32;       // SCHED_NR_MIGRATE_BREAK (8 only on PREEMPT_RT)

// capacity_greater(): more than ~5% larger.
bool capacity_greater(double a, double b) { return a * 1024 > b * 1078; }

// sibling_imbalance(): tasks to move so both groups run the same number per core.
double sibling_imbalance(bool idle, const SgStats& busiest, const SgStats& local) {
    if (!idle || !busiest.sum_nr_running) return 0;
    const long nb = busiest.cores, nl = local.cores;
    if (nb == nl) return std::max(0, busiest.sum_nr_running - local.sum_nr_running);
    long imb = std::max<long>(0, nl * busiest.sum_nr_running - nb * local.sum_nr_running);
    imb = (2 * imb + nl + nb) / (nl + nb);
    if (imb <= 1 && local.sum_nr_running == 0 && busiest.sum_nr_running > 1) imb = 2;
    return static_cast<double>(imb);
}

}  // namespace

// task_hot(): siblings share every cache; SCHED_IDLE tasks are never hot; otherwise a task that
// ran within sysctl_sched_migration_cost is.
bool Scheduler::task_hot(const Task& t, const LbEnv& env) const {
    if (t.policy == SchedPolicy::idle) return false;
    if (sd_.of(env.dst).levels[static_cast<size_t>(env.level)].flags & SD_SHARE_CPUCAPACITY) return false;
    // CACHE_HOT_BUDDY: the next buddy is hot while the destination has work.
    if (cfg_.features.on(Feat::CACHE_HOT_BUDDY) && rq_of(env.dst).nr_running > 0 && cfs_of(t, t.cpu).next == &t)
        return true;
    if (cfg_.migration_cost_ns == 0) return false;
    return engine_.now() - t.exec_start < cfg_.migration_cost_ns;
}

// can_migrate_task(). A delayed sleeper moves only in a migrate_load balance ("sched/fair: Do
// not try to migrate delayed dequeue task", 6.14), and, being ineligible, only after a failure.
bool Scheduler::can_migrate_task(const Task& t, LbEnv& env) const {
    if (t.sched_delayed && env.type != MigrationType::load) return false;
    // Eligible tasks go first: an ineligible one (lag < 0, kept by place_entity() on the new CPU)
    // waits until this domain has failed to balance (task_is_ineligible_on_dst_cpu()).
    const int failed = rq_of(env.dst).dom[static_cast<size_t>(env.level)].nr_balance_failed;
    if (failed == 0 && cfg_.features.on(Feat::PLACE_LAG) && !cfs_of(t, env.dst).queue.empty() &&
        !entity_eligible(cfs_of(t, t.cpu), t))
        return false;
    if (t.per_cpu_kthread) return false;
    if (!t.allowed.test(env.dst) || t.migration_disabled) return false;
    env.all_pinned = false;  // a task that could run on dst_cpu
    if (t.state == TaskState::running) return false;  // task_on_cpu()
    if (t.state != TaskState::runnable && !t.sched_delayed) return false;
    if (env.active_lb) return true;
    const SchedDomain& D = sd_.of(env.dst).levels[static_cast<size_t>(env.level)];
    return !task_hot(t, env) || failed > D.cache_nice_tries;
}

// detach_task() + attach_task(). A delayed sleeper stays delayed on the new CPU
// (enqueue_task_fair() without ENQUEUE_WAKEUP: not runnable there) and preempts nothing.
void Scheduler::move_task(Task& t, int src, int dst, MigrationCause cause) {
    const bool delayed = t.sched_delayed;
    if (!delayed) pelt_update_task(t, false, true);  // dequeue() updates a delayed sleeper itself
    dequeue(src, t);
    update_idle_state(src);
    set_task_cpu(t, dst, cause);
    enqueue(dst, t, false, delayed);
    if (!delayed) t.state = TaskState::runnable;
    update_idle_state(dst);
    // attach_task(): wakeup_preempt(rq, p, 0), as for a wakeup
    if (!delayed && rq_of(dst).curr && check_preempt_wakeup_fair(dst, t, 0)) resched_curr(dst);
}

// detach_tasks() + attach_tasks(): walk cfs_tasks from the tail (least recently enqueued or
// picked), at most loop_max entries; a task that cannot go is rotated to the head.
int Scheduler::detach_tasks(LbEnv& env) {
    Rq& srq = rq_of(env.src);
    if (srq.nr_running <= 1) {
        env.all_pinned = false;
        return 0;
    }
    if (env.imbalance <= 0) return 0;
    lb_tasks_.clear();
    for_each_queued(srq, [&](Task* t) { lb_tasks_.push_back(t); });
    // The walk visits at most the loop_max (or loop_break) oldest: only they need their order
    // (cfs_seq is unique, so the order is the same as a full sort's).
    const auto visits = static_cast<size_t>(std::max(0, std::min(env.loop_max, env.loop_break) - env.loop) + 1);
    const auto order_end = lb_tasks_.begin() + static_cast<std::ptrdiff_t>(std::min(visits, lb_tasks_.size()));
    std::partial_sort(lb_tasks_.begin(), order_end, lb_tasks_.end(),
                      [](const Task* a, const Task* b) { return a->cfs_seq < b->cfs_seq; });
    const int level = env.level;
    const int cache_nice = rq_of(env.dst).dom[static_cast<size_t>(level)].nr_balance_failed;
    const MigrationCause cause = env.idle == CpuIdle::newly_idle ? MigrationCause::newidle : MigrationCause::balance;
    int detached = 0;
    for (Task* p : lb_tasks_) {
        // Do not empty the source: it could then be balanced the other way.
        if (env.idle != CpuIdle::not_idle && srq.nr_running <= 1) break;
        if (++env.loop > env.loop_max) break;
        if (env.loop > env.loop_break) {  // a breather every nr_migrate tasks
            env.loop_break += kNrMigrateBreak;
            env.need_break = true;
            break;
        }
        bool take = can_migrate_task(*p, env);
        if (take) {
            switch (env.type) {
                case MigrationType::load: {
                    const double load = std::max(task_load(*p), 1.0);
                    // shr_bound(load, nr_balance_failed): relaxed after failures.
                    if (std::ldexp(load, -std::min(cache_nice, 63)) > env.imbalance) take = false;
                    else env.imbalance -= load;
                    break;
                }
                case MigrationType::util: {
                    const double util = task_util(*p);
                    if (std::ldexp(util, -std::min(cache_nice, 63)) > env.imbalance) take = false;
                    else env.imbalance -= util;
                    break;
                }
                case MigrationType::task: env.imbalance -= 1; break;
                case MigrationType::misfit:
                    if (task_fits_cpu(*p, env.src)) take = false;
                    else env.imbalance = 0;
                    break;
            }
        }
        if (!take) {
            p->cfs_seq = ++cfs_seq_;  // list_move to the head
            continue;
        }
        move_task(*p, env.src, env.dst, cause);
        ++detached;
        // CONFIG_PREEMPTION: newidle stops after one task to keep the critical section short.
        if (env.idle == CpuIdle::newly_idle) break;
        if (env.imbalance <= 0) break;
    }
    return detached;
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

// should_we_balance(): newidle balances if still idle; otherwise the first idle CPU of the local
// group (an idle core first, above SMT), else the group's first CPU.
bool Scheduler::should_we_balance(int cpu, int level, CpuIdle idle) const {
    const Rq& rq = rq_of(cpu);
    if (idle == CpuIdle::newly_idle) return rq.nr_running == 0 && !rq.ttwu_pending;
    const SchedDomain& D = sd_.of(cpu).levels[static_cast<size_t>(level)];
    const CpuSet& local = D.groups.front();
    int idle_smt = -1;
    for (int c = local.first(); c >= 0; c = local.next(c + 1)) {
        if (!available_idle_cpu(c)) continue;
        if (!(D.flags & SD_SHARE_CPUCAPACITY)) {
            bool core_idle = true;
            for (int s : topo_.smt_list(c))
                if (!available_idle_cpu(s)) core_idle = false;
            if (!core_idle) {
                if (idle_smt < 0) idle_smt = c;
                continue;
            }
        }
        return c == cpu;
    }
    if (idle_smt >= 0) return idle_smt == cpu;
    return local.first() == cpu;
}

// sched_balance_find_src_group(): update_sd_lb_stats() over the domain's groups (the first is the
// local one), the "is there an imbalance" exits, then calculate_imbalance(). Returns the busiest
// group's index with env.type and env.imbalance set, or -1 when balanced.
int Scheduler::sched_balance_find_src_group(LbEnv& env) {
    const SchedDomain& D = sd_.of(env.dst).levels[static_cast<size_t>(env.level)];
    const uint32_t child_flags = env.level > 0 ? sd_.of(env.dst).levels[static_cast<size_t>(env.level) - 1].flags : 0;
    const bool idle = env.idle != CpuIdle::not_idle;
    const bool asym = D.flags & SD_ASYM_CPUCAPACITY;
    int overutilized = -1;  // sg_overutilized: the first CPU of the domain found overutilized
    const bool at_root = static_cast<size_t>(env.level) + 1 == sd_.of(env.dst).levels.size();
    bool overloaded = false;  // sg_overloaded, at the root level: a runqueue with two tasks, or a misfit
    // update_sg_lb_stats()
    auto stats = [&](const CpuSet& span, bool local_group) {
        SgStats s;
        const CpuSet g = span & env.cpus;
        s.min_capacity = std::numeric_limits<double>::max();
        s.smt_group = child_flags & SD_SHARE_CPUCAPACITY;
        int n = 0;
        for (int c = g.first(); c >= 0; c = g.next(c + 1)) {
            ++n;
            const Rq& r = rq_of(c);
            sg_account_cpu(s, c);
            if (eas_ && overutilized < 0 && cpu_overutilized(c)) overutilized = c;
            if (at_root && r.nr_running > 1) overloaded = true;
            s.min_capacity = std::min<double>(s.min_capacity, capacity_of(c));
            const int first_sibling = topo_.smt_list(c).front();  // the lowest: the list is in order
            if (first_sibling == c || !g.test(first_sibling)) ++s.cores;
            // rq->misfit_task_load, as the last pick or tick left it.
            if (!local_group && asym && s.misfit_task_load < r.misfit_task_load) {
                s.misfit_task_load = r.misfit_task_load;
                overloaded = true;
            }
        }
        s.group_weight = g == span ? n : span.count();
        // smt_balance(): an SMT core running two tasks while this CPU is idle.
        if (!local_group && idle && s.smt_group && s.sum_h_nr_running > 1) s.smt_balance = true;
        s.type = group_classify(D.imbalance_pct, s);
        if (s.type == GroupType::overloaded) s.avg_load = s.group_load * kCapacityScale / s.group_capacity;
        return s;
    };
    SgStats local = stats(D.groups.front(), true);
    double total_load = local.group_load, total_capacity = local.group_capacity;
    SgStats busiest;  // init_sd_lb_stats(): busiest_stat has spare, with every CPU idle
    busiest.idle_cpus = std::numeric_limits<int>::max();
    int busiest_g = -1;
    for (size_t gi = 1; gi < D.groups.size(); ++gi) {
        const CpuSet& g = D.groups[gi];
        SgStats s = stats(g, false);
        total_load += s.group_load;
        total_capacity += s.group_capacity;
        // update_sd_pick_busiest()
        auto pick = [&]() {
            if (!s.sum_h_nr_running) return false;
            if (asym && s.type == GroupType::misfit_task &&
                (!capacity_greater(capacity_of(env.dst), s.max_capacity) || local.type != GroupType::has_spare))
                return false;
            if (s.type > busiest.type) return true;
            if (s.type < busiest.type) return false;
            bool has_spare = false;
            switch (s.type) {
                case GroupType::overloaded: return s.avg_load > busiest.avg_load;
                case GroupType::imbalanced: return false;
                case GroupType::asym_packing: return false;
                case GroupType::misfit_task: return s.misfit_task_load > busiest.misfit_task_load;
                case GroupType::smt_balance:
                    if (s.idle_cpus != 0 || busiest.idle_cpus != 0) {
                        has_spare = true;
                        break;
                    }
                    [[fallthrough]];
                case GroupType::fully_busy:
                    // avg_load is 0 for groups that are not overloaded: the first SMT group stays,
                    // otherwise the last one wins.
                    if (s.avg_load < busiest.avg_load) return false;
                    if (s.avg_load == busiest.avg_load && busiest.smt_group) return false;
                    break;
                case GroupType::has_spare: has_spare = true; break;
            }
            if (has_spare) {
                if (s.idle_cpus > busiest.idle_cpus) return false;
                if (s.idle_cpus == busiest.idle_cpus && s.sum_nr_running <= busiest.sum_nr_running) return false;
            }
            if (asym && s.type <= GroupType::fully_busy && capacity_greater(s.min_capacity, capacity_of(env.dst)))
                return false;
            return true;
        };
        if (pick()) {
            busiest = s;
            busiest_g = static_cast<int>(gi);
        }
    }
    // update_sd_lb_stats(): the root level sets rd->overloaded and rd->overutilized to what it
    // found; a lower level can only set rd->overutilized.
    if (at_root) rd_overloaded_ = overloaded;
    if (eas_ && (overutilized >= 0 || at_root)) {
        rd_overutilized_ = overutilized >= 0;
        rd_overutilized_by_ = overutilized;
    }
    env.imbalance = 0;
    if (busiest_g < 0) return -1;
    // With an energy model and the root domain not overutilized, EAS places tasks and the balancer
    // leaves them alone: only misfit tasks move.
    if (busiest.type != GroupType::misfit_task && eas_ && !rd_overutilized_) return -1;
    const bool prefer_sibling = env.level > 0 && (child_flags & SD_PREFER_SIBLING);
    double sds_avg_load = 0;
    bool force = busiest.type == GroupType::misfit_task || busiest.type == GroupType::imbalanced ||
                 busiest.type == GroupType::asym_packing;
    if (!force) {
        if (local.type > busiest.type) return -1;
        if (local.type == GroupType::overloaded) {
            if (local.avg_load >= busiest.avg_load) return -1;
            sds_avg_load = total_load * kCapacityScale / total_capacity;
            if (local.avg_load >= sds_avg_load) return -1;
            if (100 * busiest.avg_load <= D.imbalance_pct * local.avg_load) return -1;
        }
        if (prefer_sibling && local.type == GroupType::has_spare && sibling_imbalance(idle, busiest, local) > 1)
            force = true;
    }
    if (!force && busiest.type != GroupType::overloaded) {
        // The "not overloaded" exits: a busy CPU leaves it to an idle one; no imbalance of idle
        // CPUs worth more than one; nothing waiting in the busiest group.
        if (!idle) return -1;
        const bool smt_vs_nonsmt = local.smt_group != busiest.smt_group;
        if (!(busiest.type == GroupType::smt_balance && smt_vs_nonsmt)) {
            if (busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1) return -1;
            if (busiest.sum_h_nr_running == 1) return -1;
        }
    }
    // calculate_imbalance()
    switch (busiest.type) {
        case GroupType::misfit_task:
            env.type = asym ? MigrationType::misfit : MigrationType::load;
            env.imbalance = asym ? 1 : busiest.misfit_task_load;
            return busiest_g;
        case GroupType::asym_packing:
            env.type = MigrationType::task;
            env.imbalance = busiest.sum_h_nr_running;
            return busiest_g;
        case GroupType::smt_balance:
        case GroupType::imbalanced:
            env.type = MigrationType::task;
            env.imbalance = 1;
            return busiest_g;
        default: break;
    }
    if (local.type == GroupType::has_spare) {
        if (busiest.type > GroupType::fully_busy && !(D.flags & SD_SHARE_LLC)) {
            // Fill the local group's spare capacity.
            env.type = MigrationType::util;
            env.imbalance = std::max(local.group_capacity, local.group_util) - local.group_util;
            if (idle && env.imbalance <= 0) {
                env.type = MigrationType::task;
                env.imbalance = 1;
            }
            return env.imbalance > 0 ? busiest_g : -1;
        }
        env.type = MigrationType::task;
        if (busiest.group_weight == 1 || prefer_sibling)
            env.imbalance = sibling_imbalance(idle, busiest, local);
        else
            env.imbalance = std::max(0, local.idle_cpus - busiest.idle_cpus);
        // adjust_numa_imbalance(): a lightly loaded node may keep a communicating pair.
        if ((D.flags & SD_NUMA) && local.sum_nr_running + 1 <= D.imb_numa_nr && env.imbalance <= kNumaImbalanceMin)
            env.imbalance = 0;
        env.imbalance = static_cast<double>(static_cast<long>(env.imbalance) >> 1);
        return env.imbalance > 0 ? busiest_g : -1;
    }
    if (local.type < GroupType::overloaded) {
        local.avg_load = local.group_load * kCapacityScale / local.group_capacity;
        if (local.avg_load >= busiest.avg_load) return -1;
        sds_avg_load = total_load * kCapacityScale / total_capacity;
        if (local.avg_load >= sds_avg_load) return -1;
    }
    env.type = MigrationType::load;
    env.imbalance = std::min((busiest.avg_load - sds_avg_load) * busiest.group_capacity,
                             (sds_avg_load - local.avg_load) * local.group_capacity) /
                    kCapacityScale;
    return env.imbalance > 0 ? busiest_g : -1;
}

// sched_balance_find_src_rq(): the busiest runqueue of the group for the migration type.
int Scheduler::sched_balance_find_src_rq(const LbEnv& env, int group) const {
    const SchedDomain& D = sd_.of(env.dst).levels[static_cast<size_t>(env.level)];
    const CpuSet g = D.groups[static_cast<size_t>(group)] & env.cpus;
    int busiest = -1, busiest_nr = 0;
    double busiest_load = 0, busiest_cap = 1, busiest_util = 0;
    for (int c = g.first(); c >= 0; c = g.next(c + 1)) {
        const Rq& r = rq_of(c);
        const int nr = r.nr_running - r.nr_delayed;
        if (!nr) continue;
        const double cap = capacity_of(c);
        if ((D.flags & SD_ASYM_CPUCAPACITY) && !capacity_greater(capacity_of(env.dst), cap) && nr == 1) continue;
        switch (env.type) {
            case MigrationType::load: {
                const double load = cpu_load(c);
                // One task heavier than the imbalance on a CPU of full capacity: leave it.
                if (nr == 1 && load > env.imbalance) break;
                if (load * busiest_cap > busiest_load * cap) {  // a CPU of no load is never the busiest
                    busiest_load = load;
                    busiest_cap = cap;
                    busiest = c;
                }
                break;
            }
            case MigrationType::util: {
                if (nr <= 1) continue;
                const double util = cpu_util_cfs_boost(c);
                if (busiest_util < util) {
                    busiest_util = util;
                    busiest = c;
                }
                break;
            }
            case MigrationType::task:
                if (busiest_nr < nr) {
                    busiest_nr = nr;
                    busiest = c;
                }
                break;
            case MigrationType::misfit: {
                if (r.misfit_task_load > busiest_load) {  // the "biggest" misfit task
                    busiest_load = r.misfit_task_load;
                    busiest = c;
                }
                break;
            }
        }
    }
    return busiest;
}

// need_active_balance(): imbalanced_active_balance() (migrate_task after cache_nice_tries + 2
// failures) and the misfit rule (no asym packing, no capacity reduced by IRQ or RT time in wakesim).
bool Scheduler::need_active_balance(const LbEnv& env) const {
    const SchedDomain& D = sd_.of(env.dst).levels[static_cast<size_t>(env.level)];
    const int failed = rq_of(env.dst).dom[static_cast<size_t>(env.level)].nr_balance_failed;
    if (env.type == MigrationType::task && failed > D.cache_nice_tries + 2) return true;
    return env.type == MigrationType::misfit;
}

// sched_balance_rq(), with its exits: out_balanced clears nr_balance_failed and, like
// out_one_pinned, doubles the interval (not for newidle); an unbalanced pass resets the interval
// to min_interval, counting a failure when nothing moved.
int Scheduler::sched_balance_rq(int cpu, int level, CpuIdle idle, bool& continue_balancing) {
    const SchedDomain& D = sd_.of(cpu).levels[static_cast<size_t>(level)];
    DomainState& ds = rq_of(cpu).dom[static_cast<size_t>(level)];
    LbEnv env;
    env.level = level;
    env.dst = cpu;
    env.idle = idle;
    env.loop_break = kNrMigrateBreak;
    env.cpus = D.span;
    int moved = 0;
    bool balanced = false, one_pinned = false;
    for (;;) {  // redo:
        if (!should_we_balance(cpu, level, idle)) {
            continue_balancing = false;
            balanced = true;
            break;
        }
        if (level == sd_.of(cpu).sd_llc && idle != CpuIdle::newly_idle) update_idle_cpu_scan(cpu, level);
        const int group = sched_balance_find_src_group(env);
        if (group < 0) {
            balanced = true;
            break;
        }
        const int src = sched_balance_find_src_rq(env, group);
        if (src < 0) {
            balanced = true;
            break;
        }
        env.src = src;
        env.all_pinned = true;
        if (rq_of(src).nr_running > 1) {
            env.loop = 0;
            env.loop_max = std::min(kNrMigrate, rq_of(src).nr_running);
            do {  // more_balance:
                env.need_break = false;
                moved += detach_tasks(env);
            } while (env.need_break);
            if (env.all_pinned) {
                // Every task of the busiest runqueue is pinned away from this CPU: try the others.
                env.cpus.clear(src);
                if (!(env.cpus - D.groups.front()).empty()) {
                    env.loop_break = kNrMigrateBreak;
                    continue;
                }
                balanced = true;  // out_all_pinned
                break;
            }
        }
        break;
    }
    if (!balanced) {
        bool active = false;
        if (!moved) {
            if (idle != CpuIdle::newly_idle && env.type != MigrationType::misfit) ++ds.nr_balance_failed;
            if (need_active_balance(env)) {
                Rq& srq = rq_of(env.src);
                if (!srq.curr || !srq.curr->allowed.test(cpu)) {
                    one_pinned = true;  // the running task cannot come here
                } else if (srq.active_balance_push < 0) {
                    // stop_one_cpu_nowait(active_load_balance_cpu_stop): preempt the source.
                    srq.active_balance_push = cpu;
                    active = true;
                    resched_curr(env.src);
                }
            }
        } else {
            ds.nr_balance_failed = 0;
        }
        if (!one_pinned) {
            (void)active;  // an active balance still needed it: reset the interval too
            ds.balance_interval_ms = D.min_interval_ms;
        }
    } else {
        ds.nr_balance_failed = 0;  // out_balanced / out_all_pinned
    }
    if ((balanced || one_pinned) && idle != CpuIdle::newly_idle && env.type != MigrationType::misfit) {
        // Tune up the interval; all-pinned runqueues may back off further (MAX_PINNED_INTERVAL).
        const int64_t max_pinned = 512;
        if ((env.all_pinned && ds.balance_interval_ms < max_pinned) || ds.balance_interval_ms < D.max_interval_ms)
            ds.balance_interval_ms *= 2;
    }
    if (wants(kObsBalance)) obs_->balance(cpu, level, idle == CpuIdle::newly_idle, moved > 0);
    return moved;
}

void Scheduler::active_load_balance_cpu_stop(int cpu) {
    Rq& rq = rq_of(cpu);
    const int target = rq.active_balance_push;
    rq.active_balance_push = -1;
    // The stopper counts in nr_running: one CFS task is enough to move.
    if (target < 0 || rq.nr_running - rq.nr_delayed < 1) return;
    const auto& levels = sd_.of(target).levels;
    int level = -1;
    for (size_t i = 0; i < levels.size(); ++i)
        if (levels[i].span.test(cpu)) {
            level = static_cast<int>(i);
            break;
        }
    if (level < 0) return;
    LbEnv env;
    env.level = level;
    env.dst = target;
    env.src = cpu;
    env.idle = CpuIdle::idle;
    env.active_lb = true;
    // detach_one_task(): from the tail, the first task that may go.
    lb_tasks_.clear();
    for_each_queued(rq, [&](Task* t) { lb_tasks_.push_back(t); });
    std::sort(lb_tasks_.begin(), lb_tasks_.end(), [](const Task* a, const Task* b) { return a->cfs_seq < b->cfs_seq; });
    for (Task* p : lb_tasks_) {
        if (!can_migrate_task(*p, env)) continue;
        move_task(*p, cpu, target, MigrationCause::active);
        rq_of(target).dom[static_cast<size_t>(level)].nr_balance_failed = 0;
        Rq& trq = rq_of(target);
        if (!trq.curr) {
            trq.idle_stamp = 0;
            arch_->kick_idle_cpu(target, cpu, IdleKick::nohz_balance, nullptr);
        }
        return;
    }
}

// update_newidle_cost(): the largest cost seen, decayed by 1% a second; with NI_RANDOM the
// success statistics (update_newidle_stats()). Returns true when it decayed.
bool Scheduler::update_newidle_cost(DomainState& ds, int64_t cost, int success) {
    if (cost) ds.update_newidle_stats(success);
    const Time now = engine_.now();
    if (cost > ds.max_newidle_lb_cost) {
        ds.max_newidle_lb_cost = cost;
        ds.last_decay_max_lb_cost = now;
    } else if (now > ds.last_decay_max_lb_cost + kNsPerSec) {
        ds.max_newidle_lb_cost = ds.max_newidle_lb_cost * 253 / 256;
        ds.last_decay_max_lb_cost = now;
        return true;
    }
    return false;
}

// get_sd_balance_interval(): msecs_to_jiffies() rounds up; a busy CPU's interval is a jiffy
// shorter, so that the levels' periods are not multiples of each other; between one jiffy and
// max_load_balance_interval (HZ x CPUs / 10).
Time Scheduler::sd_balance_interval(int64_t interval_ms, int busy_factor, bool busy) const {
    int64_t j = (interval_ms * (busy ? busy_factor : 1) * kNsPerMs + tick_ns_ - 1) / tick_ns_;
    if (busy) --j;
    const int64_t max_j = std::max<int64_t>(1, kNsPerSec / tick_ns_ * topo_.nr_cpus() / 10);
    return std::clamp<int64_t>(j, 1, max_j) * tick_ns_;
}

void Scheduler::sched_balance_domains(int cpu, bool idle) {
    Rq& rq = rq_of(cpu);
    const Time now = engine_.now();
    const auto& levels = sd_.of(cpu).levels;
    Time next = jiffy_start() + 60 * kNsPerSec;  // jiffies + 60 * HZ
    bool busy = !idle && !sched_idle_cpu(cpu);
    bool continue_balancing = true, need_decay = false;
    int64_t max_cost = 0;
    auto interval_of = [&](const DomainState& ds, const SchedDomain& D) {
        return sd_balance_interval(ds.balance_interval_ms, D.busy_factor, busy);
    };
    for (size_t i = 0; i < levels.size(); ++i) {
        DomainState& ds = rq.dom[i];
        need_decay = update_newidle_cost(ds, 0, 0) || need_decay;
        max_cost += ds.max_newidle_lb_cost;
        if (!continue_balancing) {
            if (need_decay) continue;
            break;
        }
        Time interval = interval_of(ds, levels[i]);
        if (now >= ds.last_balance + interval) {
            const CpuIdle type = idle ? CpuIdle::idle : CpuIdle::not_idle;
            if (sched_balance_rq(cpu, static_cast<int>(i), type, continue_balancing)) {
                idle = available_idle_cpu(cpu);
                busy = !idle && !sched_idle_cpu(cpu);
            }
            ds.last_balance = jiffy_start();
            interval = interval_of(ds, levels[i]);
        }
        next = std::min(next, ds.last_balance + interval);
    }
    if (need_decay) rq.max_idle_balance_cost = std::max<int64_t>(cfg_.migration_cost_ns, max_cost);
    rq.next_balance = next;
}

// nohz_balance_enter_idle(): at each stop of the tick the CPU may hold blocked load; the first
// since its last busy tick adds it to nohz.idle_cpus_mask (set_cpu_sd_state_idle(): one busy CPU
// fewer in its LLC) and asks for nohz.next_balance to be collated again.
void Scheduler::nohz_balance_enter_idle(int cpu) {
    rq_of(cpu).has_blocked_load = true;
    nohz_has_blocked_ = true;
    if (nohz_idle_.test(cpu)) return;
    nohz_idle_.set(cpu);
    nohz_needs_update_ = true;
}

// nohz_balancer_kick(): a busy CPU's tick kicks an idle CPU whose tick is stopped (an IPI) to
// balance on behalf of all of them when this CPU has two tasks queued (delayed sleepers too),
// runs a misfit task (asymmetric capacities: nothing else kicks), or shares its LLC with another
// busy CPU (sds->nr_busy_cpus: CPUs not in nohz.idle_cpus_mask); to update their blocked load
// every 32 ms; or to collate nohz.next_balance after a CPU stopped its tick (NOHZ_NEXT_KICK).
void Scheduler::nohz_balancer_kick(int busy_cpu) {
    nohz_idle_.clear(busy_cpu);     // nohz_balance_exit_idle(): the first busy tick
    if (nohz_idle_.empty()) return;  // nohz.nr_cpus
    const Time now = engine_.now();
    uint8_t flags = nohz_has_blocked_ && jiffies() > nohz_next_blocked_ ? NOHZ_STATS_KICK : 0;  // time_after()
    if (now >= nohz_next_balance_) {
        const Rq& brq = rq_of(busy_cpu);
        const auto& dom = sd_.of(busy_cpu);
        bool kick = brq.nr_running >= 2;  // rq->nr_running: delayed sleepers count
        // An asymmetric-capacity machine kicks only for a misfit task: no LLC logic.
        if (!kick && dom.sd_asym_cpucapacity >= 0)
            kick = brq.misfit_task_load > 0;  // check_misfit_status(), just after the tick set it
        else if (!kick && dom.sd_llc >= 0)
            kick = (dom.levels[static_cast<size_t>(dom.sd_llc)].span - nohz_idle_).count() > 1;
        if (kick) flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
    }
    if (nohz_needs_update_) flags |= NOHZ_NEXT_KICK;
    if (!flags) return;
    // kick_ilb(): a balance kick holds off the next one for a jiffy; a kick already on its way
    // takes the new flags, and no second IPI is sent.
    if (flags & NOHZ_BALANCE_KICK) nohz_next_balance_ = jiffy_start() + tick_ns_;
    if (nohz_ilb_ >= 0) {
        nohz_kick_flags_ |= flags;
        return;
    }
    // find_new_ilb(): the first CPU of nohz.idle_cpus_mask that is idle.
    int ilb = -1;
    for (int c = nohz_idle_.first(); c >= 0; c = nohz_idle_.next(c + 1))
        if (c != busy_cpu && available_idle_cpu(c)) {
            ilb = c;
            break;
        }
    if (ilb < 0) return;
    nohz_ilb_ = ilb;
    nohz_kick_flags_ = flags;
    const IpiSent sent = arch_->kick_idle_cpu(ilb, busy_cpu, IdleKick::nohz_balance, nullptr);
    // nohz_csd_func() before 6.13: the polled kick's need_resched raises no SCHED_SOFTIRQ.
    nohz_kick_lost_ = sent == IpiSent::poll && !prof_.polled_ilb_balances;
}

// nohz_idle_balance(): the kicked CPU, still idle when the IPI lands, runs the pass with the
// kick's flags.
void Scheduler::nohz_idle_balance(int ilb) {
    nohz_ilb_ = -1;
    const uint8_t flags = nohz_kick_flags_;
    nohz_kick_flags_ = 0;
    if (!available_idle_cpu(ilb) || nohz_kick_lost_) return;
    nohz_balance_pass(ilb, flags);
}

// update_nohz_stats(): an idle CPU's blocked load brought up to date, unless it has none left or
// was updated in this jiffy; whether it still has some.
bool Scheduler::update_nohz_stats(int cpu) {
    Rq& rq = rq_of(cpu);
    if (!rq.has_blocked_load || !nohz_idle_.test(cpu)) return false;
    if (jiffies() <= rq.last_blocked_load_update_tick) return true;
    update_blocked_averages(cpu);
    return rq.has_blocked_load;
}

// _nohz_idle_balance(): goes through the idle CPUs of nohz.idle_cpus_mask, `ilb` last: updates
// their blocked load (NOHZ_STATS_KICK), runs the periodic balance of each that is due
// (NOHZ_BALANCE_KICK), and collates nohz.next_balance; a CPU that received tasks is woken. Like
// the kicked pass, the one a CPU runs at its idle entry takes no simulated time.
void Scheduler::nohz_balance_pass(int ilb, uint8_t flags) {
    const bool balance_kick = flags & NOHZ_BALANCE_KICK, stats = flags & NOHZ_STATS_KICK;
    const CpuSet cpus = nohz_idle_ & idle_mask_ & topo_.all();
    Time next = jiffy_start() + 60 * kNsPerSec;
    bool collated = false;
    if (stats) nohz_has_blocked_ = false;  // set again below for any CPU whose signals are not yet zero
    if (flags & NOHZ_NEXT_KICK) nohz_needs_update_ = false;
    const int64_t start = jiffies();
    auto balance = [&](int c) {
        Rq& rq = rq_of(c);
        if (stats && update_nohz_stats(c)) nohz_has_blocked_ = true;
        if (balance_kick && engine_.now() >= rq.next_balance) sched_balance_domains(c, true);
        next = std::min(next, rq.next_balance);
        collated = true;
        if (balance_kick && c != ilb && !rq.curr && rq.nr_running > 0) {
            rq.idle_stamp = 0;
            arch_->kick_idle_cpu(c, ilb, IdleKick::nohz_balance, nullptr);
        }
    };
    // for_each_cpu_wrap(.., ilb + 1): the CPUs after ilb, then those before it, then ilb, which
    // need not be in the mask (a CPU entering idle before its tick stopped).
    for (int c = cpus.next(ilb + 1); c >= 0; c = cpus.next(c + 1)) balance(c);
    for (int c = cpus.first(); c >= 0 && c < ilb; c = cpus.next(c + 1)) balance(c);
    if (cpus.test(ilb)) balance(ilb);
    // nohz.next_blocked: msecs_to_jiffies(LOAD_AVG_PERIOD), rounded up to whole jiffies.
    if (stats) nohz_next_blocked_ = start + (32 * kNsPerMs + tick_ns_ - 1) / tick_ns_;
    if (balance_kick && !rq_of(ilb).curr && rq_of(ilb).nr_running > 0) rq_of(ilb).idle_stamp = 0;
    if (collated) nohz_next_balance_ = next;
}

// sched_balance_newidle(): domain by domain while avg_idle covers the cost spent so far plus the
// domain's max_newidle_lb_cost; a pass costs newidle_balance_ns per CPU of the domain's span
// (update_sd_lb_stats() reads each runqueue), which grows with the span as the kernel's measured
// cost does.
bool Scheduler::sched_balance_newidle(int cpu) {
    Rq& rq = rq_of(cpu);
    update_misfit_status(nullptr, cpu);
    if (rq.ttwu_pending) return false;
    const auto& levels = sd_.of(cpu).levels;
    if (levels.empty()) {  // no sched domain: straight to the end
        nohz_newidle_balance(cpu);
        return false;
    }
    // update_next_balance(): an idle CPU is due at its idle interval, not its busy one.
    Time next_balance = jiffy_start() + kNsPerSec;  // jiffies + HZ
    auto update_next_balance = [&](size_t i) {
        const Time interval = sd_balance_interval(rq.dom[i].balance_interval_ms, 1, false);
        next_balance = std::min(next_balance, rq.dom[i].last_balance + interval);
    };
    const bool overloaded = rd_overloaded_;  // get_rd_overloaded()
    if (!overloaded || rq.avg_idle < rq.dom[0].max_newidle_lb_cost) {
        update_next_balance(0);
        rq.next_balance = std::min(rq.next_balance, next_balance);
        nohz_newidle_balance(cpu);
        return false;
    }
    update_blocked_averages(cpu);
    int64_t cost = 0;
    bool pulled = false, continue_balancing = true;
    for (size_t i = 0; i < levels.size(); ++i) {
        DomainState& ds = rq.dom[i];
        update_next_balance(i);
        if (rq.avg_idle < cost + ds.max_newidle_lb_cost) break;
        if (levels[i].flags & SD_BALANCE_NEWIDLE) {
            int weight = 1;
            if (cfg_.features.on(Feat::NI_RANDOM)) {
                // A 1k-sided die: try as often as this level recently succeeded.
                const auto d1k = static_cast<int>(rng_balance_.below(1024));
                weight = 1 + ds.newidle_ratio;
                if (d1k > weight) {
                    ds.update_newidle_stats(0);
                    continue;
                }
                weight = (1024 + weight / 2) / weight;
            }
            pulled = sched_balance_rq(cpu, static_cast<int>(i), CpuIdle::newly_idle, continue_balancing) > 0;
            const int64_t t = prof_.newidle_balance_ns * levels[i].span_weight();
            cost += t;
            update_newidle_cost(ds, t, pulled ? weight : 0);
        }
        if (pulled || !continue_balancing) break;
    }
    rq.max_idle_balance_cost = std::max(rq.max_idle_balance_cost, cost);
    rq.next_balance = std::min(rq.next_balance, next_balance);
    if (!pulled) nohz_newidle_balance(cpu);
    return pulled;
}

// nohz_newidle_balance(): a CPU going idle for long enough (avg_idle at least the migration cost)
// updates the idle CPUs' blocked load itself, at the start of do_idle() (nohz_run_idle_balance()),
// when it is due (nohz.has_blocked, nohz.next_blocked) and no kick's pass is coming.
void Scheduler::nohz_newidle_balance(int cpu) {
    Rq& rq = rq_of(cpu);
    if (rq.avg_idle < cfg_.migration_cost_ns) return;
    if (!nohz_has_blocked_ || jiffies() < nohz_next_blocked_) return;  // time_before()
    rq.nohz_newilb = true;
}

}  // namespace wakesim
