// kernel/sched/fair.c, the wake path, in fair.c's order: record_wakee, wake_wide,
// wake_affine_idle, wake_affine_weight, wake_affine, sched_balance_find_dst_cpu (with its group
// and group-CPU steps), __update_idle_core, select_idle_core, select_idle_cpu,
// select_idle_capacity, select_idle_sibling, select_task_rq_fair. Each is a function a policy
// can call; each decision is reported to the observer (kernel/observer.h), the text-carrying
// events only for the explained select_task_rq call.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <limits>

#include "kernel/fair_balance.h"
#include "kernel/sched.h"

namespace wakesim {

void Scheduler::record_wakee(Task& waker, const Task& p) {
    const Time now = engine_.now();
    // Decay at most once per call, after a second without decay.
    if (now > waker.wakee_flip_decay_ts + kNsPerSec) {
        waker.wakee_flips >>= 1;
        waker.wakee_flip_decay_ts = now;
    }
    if (waker.last_wakee != p.id) {
        waker.last_wakee = p.id;
        ++waker.wakee_flips;
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

namespace {

// wake_affine_idle()'s body, inlined into wake_affine().
inline int affine_idle(const Scheduler& s, int this_cpu, int prev, bool sync, AffineIdle& why) {
    if (s.available_idle_cpu(this_cpu) && s.topo().shares_llc(this_cpu, prev)) {
        // An interrupt woke the task on an idle CPU cache-affine with prev.
        why = AffineIdle::waker_idle;
        return s.available_idle_cpu(prev) ? prev : this_cpu;
    }
    if (sync && s.nr_running(this_cpu) - s.nr_delayed(this_cpu) == 1) {
        why = AffineIdle::sync_alone;
        return this_cpu;
    }
    if (s.available_idle_cpu(prev)) {
        why = AffineIdle::prev_idle;
        return prev;
    }
    why = AffineIdle::no_decision;
    return -1;
}

}  // namespace

int Scheduler::wake_affine_idle(int this_cpu, int prev, bool sync, AffineIdle* why) const {
    AffineIdle branch;
    const int target = affine_idle(*this, this_cpu, prev, sync, branch);
    if (why) *why = branch;
    return target;
}

int Scheduler::wake_affine_weight(int sd_level, const Task& p, const Task* waker, int this_cpu, int prev, bool sync,
                                  WakeAffineEv* ev) const {
    const SchedDomain& D = sd_.of(this_cpu).levels[static_cast<size_t>(sd_level)];
    double this_eff = cpu_load(this_cpu);
    if (sync && waker) {
        const double cur = task_load(*waker);
        if (cur > this_eff) {
            if (ev) ev->weight = AffineWeight::sync_heavier;
            return this_cpu;
        }
        this_eff -= cur;
    }
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
    if (ev) {
        ev->weight = AffineWeight::compared;
        ev->this_eff = this_eff;
        ev->prev_eff = prev_eff;
    }
    return this_eff < prev_eff ? this_cpu : -1;
}

int Scheduler::wake_affine(int sd_level, const Task& p, const Task* waker, int this_cpu, int prev, bool sync) {
    AffineIdle idle = AffineIdle::off;
    int target = -1;
    if (cfg_.features.on(Feat::WA_IDLE)) target = affine_idle(*this, this_cpu, prev, sync, idle);
    if (!steps_) {
        if (cfg_.features.on(Feat::WA_WEIGHT) && target == -1)
            target = wake_affine_weight(sd_level, p, waker, this_cpu, prev, sync, nullptr);
        if (target != this_cpu) return prev;
        sel_.affine = true;
        return this_cpu;
    }
    // The same, with the event.
    WakeAffineEv ev;
    ev.this_cpu = this_cpu;
    ev.prev = prev;
    ev.sync = sync;
    ev.idle = idle;
    ev.idle_target = target;
    if (cfg_.features.on(Feat::WA_WEIGHT) && target == -1)
        target = wake_affine_weight(sd_level, p, waker, this_cpu, prev, sync, &ev);
    ev.target = target;
    ev.cpu = target == this_cpu ? this_cpu : prev;
    if (target == this_cpu) sel_.affine = true;
    obs_->wake_affine(ev);
    return ev.cpu;
}

// sched_balance_find_dst_group(): the least busy group of D other than the local one (the first),
// by group type, then idle CPUs and utilisation (a group with spare capacity) or average load (a
// busy one); -1 when the task should stay in the local group. update_sg_wakeup_stats() with a
// forked task, which is on no runqueue: its "_without" values are the plain ones.
int Scheduler::sched_balance_find_dst_group(const Task& p, const SchedDomain& D) const {
    const bool asym = D.flags & SD_ASYM_CPUCAPACITY;
    const bool all_allowed = p.allowed.contains(D.span);
    auto stats = [&](const CpuSet& span) {
        SgStats s;
        if (asym) s.misfit_task_load = 1;  // assume p fits no CPU of the group
        for (int c = span.first(); c >= 0; c = span.next(c + 1)) {
            ++s.group_weight;
            // Only p's CPUs count ("sched/fair: Only update stats for allowed CPUs when looking
            // for dst group", Adam Li, 6.19); the capacity and weight stay the whole group's.
            if (!all_allowed && !p.allowed.test(c)) {
                s.group_capacity += capacity_of(c);
                s.max_capacity = std::max<double>(s.max_capacity, capacity_of(c));
                continue;
            }
            sg_account_cpu(s, c);
            if (asym && s.misfit_task_load > 0 && task_fits_cpu(p, c)) s.misfit_task_load = 0;
        }
        s.type = group_classify(D.imbalance_pct, s);
        if (s.type == GroupType::fully_busy || s.type == GroupType::overloaded)
            s.avg_load = s.group_load * kCapacityScale / s.group_capacity;
        return s;
    };
    // update_pick_idlest()
    auto idler = [](const SgStats& s, const SgStats& idlest) {
        if (s.type != idlest.type) return s.type < idlest.type;
        switch (s.type) {
            case GroupType::overloaded:
            case GroupType::fully_busy: return s.avg_load < idlest.avg_load;
            case GroupType::misfit_task: return s.max_capacity > idlest.max_capacity;
            case GroupType::has_spare:
                return s.idle_cpus > idlest.idle_cpus || (s.idle_cpus == idlest.idle_cpus && s.group_util < idlest.group_util);
            default: return false;  // not used in the slow wakeup path
        }
    };
    int idlest_g = -1;
    SgStats idlest;
    idlest.type = GroupType::overloaded;
    idlest.avg_load = std::numeric_limits<double>::max();
    for (size_t gi = 1; gi < D.groups.size(); ++gi) {
        if (!D.groups[gi].intersects(p.allowed)) continue;
        const SgStats s = stats(D.groups[gi]);
        if (idler(s, idlest)) {
            idlest_g = static_cast<int>(gi);
            idlest = s;
        }
    }
    if (idlest_g < 0) return -1;
    const CpuSet& local_span = D.groups.front();
    if (!local_span.intersects(p.allowed)) return idlest_g;
    const SgStats local = stats(local_span);
    if (local.type != idlest.type) return local.type > idlest.type ? idlest_g : -1;
    switch (local.type) {
        case GroupType::overloaded:
        case GroupType::fully_busy: {
            const double imbalance = 1024 * (D.imbalance_pct - 100) / 100;  // NICE_0_LOAD's share, integer as in fair.c
            if ((D.flags & SD_NUMA) && idlest.avg_load + imbalance >= local.avg_load) return -1;
            if (idlest.avg_load >= local.avg_load + imbalance) return -1;
            if (100 * local.avg_load <= D.imbalance_pct * idlest.avg_load) return -1;
            return idlest_g;
        }
        case GroupType::has_spare:
            // A NUMA level keeps a new task near its parent while the local node runs few tasks
            // (adjust_numa_imbalance(), "sched/numa: Allow a floating imbalance between NUMA
            // nodes", Gorman, 2022); the periodic balancer spreads it if it has to.
            if (D.flags & SD_NUMA) {
                const int imb_numa_nr = std::min(D.imb_numa_nr, (local_span & p.allowed).count());
                const int imbalance = std::abs(local.idle_cpus - idlest.idle_cpus);
                if (local.sum_nr_running + 1 <= imb_numa_nr && imbalance <= kNumaImbalanceMin) return -1;
            }
            return local.idle_cpus >= idlest.idle_cpus ? -1 : idlest_g;
        case GroupType::misfit_task:  // the group with the highest max capacity
            return local.max_capacity >= idlest.max_capacity ? -1 : idlest_g;
        default: return -1;  // not in the slow wakeup path
    }
}

// sched_balance_find_dst_cpu(): fork/exec placement, descending from the highest domain with the
// flag: the least busy group (sched_balance_find_dst_group()), then its idlest CPU.
int Scheduler::sched_balance_find_dst_cpu(const Task& p, int cpu, int prev, uint32_t sd_flag) {
    const auto& levels0 = sd_.of(cpu).levels;
    int top = -1;
    for (size_t i = 0; i < levels0.size(); ++i)
        if (levels0[i].flags & sd_flag) top = static_cast<int>(i);
    if (top < 0) return p.allowed.test(prev) ? prev : p.allowed.first();
    if (!levels0[static_cast<size_t>(top)].span.intersects(p.allowed)) return prev;
    int new_cpu = cpu;
    for (int level = top; level >= 0;) {
        const auto& D = sd_.of(cpu).levels[static_cast<size_t>(level)];
        if (!(D.flags & sd_flag)) {
            --level;
            continue;
        }
        const int best_g = sched_balance_find_dst_group(p, D);
        if (best_g < 0) {
            --level;
            continue;
        }
        // sched_balance_find_dst_group_cpu(): the idle CPU in the shallowest idle state (the most
        // recently idled among equals), else the least loaded.
        const CpuSet g = D.groups[static_cast<size_t>(best_g)] & p.allowed;
        int pick = -1;
        Time latest = -1;
        int64_t min_exit = std::numeric_limits<int64_t>::max();
        double least = 0;
        bool have_idle = false;
        for (int c = g.first(); c >= 0; c = g.next(c + 1)) {
            if (sched_idle_cpu(c)) {
                pick = c;
                break;
            }
            if (available_idle_cpu(c)) {
                const Time st = rq_of(c).idle_stamp;
                const int64_t exit = arch_->idle_exit_latency(c);  // -1: in no state (idle_get_state() NULL)
                if (exit >= 0 && exit < min_exit) {
                    min_exit = exit;
                    pick = c;
                    latest = st;
                } else if ((exit < 0 || exit == min_exit) && (!have_idle || st > latest)) {
                    pick = c;
                    latest = st;
                }
                have_idle = true;
            } else if (!have_idle) {
                const double l = cpu_load(c);
                if (pick < 0 || l < least) {
                    pick = c;
                    least = l;
                }
            }
        }
        if (pick < 0 || pick == cpu) {
            --level;
            continue;
        }
        // On down from the new CPU's highest flagged domain narrower than D: CPUs of a
        // big.LITTLE machine can have different levels (a cluster level or none).
        const int weight = D.span_weight();
        cpu = pick;
        new_cpu = pick;
        const auto& levels = sd_.of(cpu).levels;
        level = -1;
        for (size_t i = 0; i < levels.size() && levels[i].span_weight() < weight; ++i)
            if (levels[i].flags & sd_flag) level = static_cast<int>(i);
    }
    if (!p.allowed.test(new_cpu)) new_cpu = p.allowed.first();
    return new_cpu;
}

bool Scheduler::has_idle_cores(int cpu) const { return llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)].has_idle_cores; }
int Scheduler::nr_idle_scan(int cpu) const { return llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)].nr_idle_scan; }
void Scheduler::set_nr_idle_scan(int cpu, int v) { llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)].nr_idle_scan = v; }
void Scheduler::set_has_idle_cores(int cpu, bool v) { llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)].has_idle_cores = v; }

// __update_idle_core(): a CPU entering idle sets the LLC's has_idle_cores if its core is idle.
void Scheduler::update_idle_core(int cpu) {
    if (!sd_.smt_active()) return;
    LlcShared& sh = llc_[static_cast<size_t>(sd_.of(cpu).sd_llc_id)];
    if (sh.has_idle_cores) return;
    for (int s : topo_.smt_list(cpu))
        if (s != cpu && !available_idle_cpu(s)) return;
    sh.has_idle_cores = true;
}

int Scheduler::select_idle_core(int core_cpu, const CpuSet& cpus, CpuSet& remaining, int& idle_cpu, int& probes) const {
    bool all_idle = true;
    const CpuSet& sib = topo_.smt_siblings(core_cpu);
    for (int s : topo_.smt_list(core_cpu)) {
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
    // Scan `set` in id order from `start`, wrapping; the non-core branch stops after nr probes.
    auto scan = [&](CpuSet set, int start) -> int {
        if (has_idle_core) {
            CpuSet remaining = set;
            for (int c = remaining.next_wrap(start); c >= 0; c = remaining.next_wrap(c + 1)) {
                remaining.clear(c);
                int r = select_idle_core(c, cpus, remaining, idle_cpu, probes);
                if (r >= 0) return r;
                if (remaining.empty()) break;
            }
            return -1;
        }
        const CpuSet cand = set & (idle_mask_ | sched_idle_mask_);
        int c = cand.empty() ? -1 : cand.next_wrap(start);
        const int total = set.count();
        int pos;  // 1-based position of c in the wrap order; a fruitless pass probes all `total`
        if (c < 0)
            pos = total;
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
    // The LLC's own group first when it is target's cluster (sd_llc->groups has SD_CLUSTER): not
    // where target's cluster level degenerated, as for a lone big CPU.
    const auto llc = static_cast<size_t>(cd.sd_llc);
    if (sd_.cluster_active() && llc > 0 && (cd.levels[llc - 1].flags & SD_CLUSTER)) {
        const CpuSet& cluster = cd.levels[llc - 1].span;
        const CpuSet cl = cluster & cpus;
        if (!(cl == cpus) && !cl.empty()) {
            int r = scan(cl, target + 1);
            if (r == -2) return -1;
            if (r >= 0) return r;
            cpus -= cluster;
        }
    }
    int r = scan(cpus, target + 1 >= kMaxCpus ? 0 : target + 1);
    if (r == -2) return -1;
    if (r >= 0) return r;
    if (has_idle_core) sh.has_idle_cores = false;  // a full scan found no idle core
    return idle_cpu;
}

// select_idle_capacity(): the first idle CPU that fits fully; else the one that fits best (-1,
// only the uclamp_min hint missed, before 0), the largest capacity among equals.
int Scheduler::select_idle_capacity(const Task& p, int target, double util) const {
    const CpuDomains& cd = sd_.of(target);
    const CpuSet span = cd.levels[static_cast<size_t>(cd.sd_asym_cpucapacity)].span & p.allowed;
    int best = -1, best_cap = 0, best_fits = 0;
    for (int c = span.next_wrap(target); c >= 0;) {
        if (usable(c)) {
            const int fits = util_fits_cpu(util, p.uclamp_min, p.uclamp_max, c);
            if (fits > 0) return c;
            if (fits < best_fits || (fits == best_fits && capacity_of(c) > best_cap)) {
                best = c;
                best_cap = capacity_of(c);
                best_fits = fits;
            }
        }
        c = span.next_wrap(c + 1);
        if (c == span.next_wrap(target)) break;
    }
    return best;
}

int Scheduler::select_idle_sibling(Task& p, const Task* waker, int this_cpu, int prev, int target) {
    const bool asym = sd_.asym_active();
    // asym_fits_cpu() on task_util_est() after sync_entity_load_avg().
    const double wutil = asym ? wakee_util(p) : 0.0;
    auto fits = [&](int c) { return !asym || util_fits_cpu(wutil, p.uclamp_min, p.uclamp_max, c) > 0; };
    auto outcome = [&](SelectOutcome o, int cpu, SisFallback fb = SisFallback::none) {
        select_outcome(o, cpu, fb);
        return cpu;
    };
    if (explain_) obs_->sis_begin({prev, target});
    // 1. The target itself.
    if (usable(target) && fits(target)) return outcome(SelectOutcome::sis_target, target);
    if (explain_) obs_->sis_target_busy({target, nr_running(target), rq_of(target).ttwu_pending, !usable(target) || fits(target)});
    // 2. prev, when idle and cache-affine.
    int prev_aff = -1;
    if (prev != target && topo_.shares_llc(prev, target) && usable(prev) && fits(prev)) {
        if (!sd_.cluster_active() || shares_resources(prev, target)) return outcome(SelectOutcome::sis_prev, prev);
        prev_aff = prev;
    } else if (explain_) {
        obs_->sis_prev({prev, prev == target                     ? PrevSkip::is_target
                              : !usable(prev)                    ? PrevSkip::busy
                              : !topo_.shares_llc(prev, target)  ? PrevSkip::not_cache_affine
                                                                 : PrevSkip::does_not_fit});
    }
    // 3. A per-CPU kthread waker (I/O completion) stacks the wakee on its CPU.
    if (waker && waker->per_cpu_kthread && prev == this_cpu && nr_running(this_cpu) <= 1 && fits(prev))
        return outcome(SelectOutcome::sis_kthread, prev);
    // 4. recent_used_cpu.
    int recent = p.recent_used_cpu;
    p.recent_used_cpu = prev;
    if (recent >= 0 && recent != prev && recent != target && topo_.shares_llc(recent, target) && usable(recent) &&
        p.allowed.test(recent) && fits(recent)) {
        if (!sd_.cluster_active() || shares_resources(recent, target)) return outcome(SelectOutcome::sis_recent, recent);
    } else {
        recent = -1;
    }
    // 5. Asymmetric capacity: search the asym domain for an idle CPU that fits.
    if (asym && sd_.of(target).sd_asym_cpucapacity >= 0) {
        const int c = select_idle_capacity(p, target, wutil);
        return outcome(SelectOutcome::sis_capacity, c >= 0 ? c : target);
    }
    // 6. No LLC domain: nothing to search.
    if (sd_.of(target).sd_llc < 0) return outcome(SelectOutcome::sis_fallback, target, SisFallback::no_llc);
    // 7. SMT: an idle sibling of prev when no core is fully idle (select_idle_smt).
    bool has_idle_core = false;
    if (sd_.smt_active()) {
        has_idle_core = has_idle_cores(target);
        if (!has_idle_core && topo_.shares_llc(prev, target)) {
            const CpuSet sib = topo_.smt_siblings(prev) & p.allowed & topo_.llc_span(target);
            for (int s = sib.first(); s >= 0; s = sib.next(s + 1))
                if (s != prev && usable(s)) return outcome(SelectOutcome::sis_smt, s);
        }
    }
    // 8. select_idle_cpu.
    int probes = 0;
    const int c = select_idle_cpu(p, target, has_idle_core, target, probes);
    ttwu_work_.sis_probes += probes;
    sel_.sis_probes += probes;
    if (steps_) obs_->select_idle_cpu({has_idle_core, nr_idle_scan(target), probes, c});
    if (c >= 0) return outcome(SelectOutcome::sis_scan, c);
    // 9. Fallbacks.
    if (prev_aff >= 0) return outcome(SelectOutcome::sis_fallback, prev_aff, SisFallback::prev_other_cluster);
    if (recent >= 0) return outcome(SelectOutcome::sis_fallback, recent, SisFallback::recent);
    return outcome(SelectOutcome::sis_fallback, target, SisFallback::target);
}

// The sched_vcpu_pack patch of the development VM's guest kernel (Firecracker builds, not in
// mainline; its placement read from the running 6.18.44 kernel, docs/validation.md): waking an
// idle vCPU costs a VM exit and a halted-vCPU wakeup, so a wakee is packed onto a busy vCPU that
// has room. Room: p may run there, the vCPU runs fair tasks only (the model has no other class),
// at most one of them runnable (p itself, if already queued there, aside), no wakeup pending, and
// cpu_util_cfs() plus p's util_est (unless p is already there) under 70% of its capacity.
bool Scheduler::vcpu_pack_room(const Task& p, int cpu) const {
    if (!p.allowed.test(cpu)) return false;
    const Rq& rq = rq_of(cpu);
    if (rq.ttwu_pending) return false;
    const int self = p.on_rq && p.cpu == cpu ? 1 : 0;
    if (rq.nr_running - rq.nr_delayed > 1 + self) return false;
    double util = cpu_util(cpu);
    if (cpu != p.cpu) util += task_util(p);
    return util * 100 < static_cast<double>(capacity_of(cpu)) * 70;
}

// The patch's step at the top of select_task_rq_fair(), before record_wakee(), by the bits of the
// boot parameter: 1 an interrupt's wakeup on an idle vCPU stays there; 2 a WF_SYNC wakeup packs
// onto the waker's vCPU; 4 onto the busy prev, else the waker's vCPU, else the first busy vCPU
// with room. Bit 8 (fork) is in wake_up_new_task().
int Scheduler::vcpu_pack_select(const Task& p, const Task* waker, int this_cpu, int prev, bool sync) const {
    const int64_t bits = prof_.vcpu_pack;
    const Rq& here = rq_of(this_cpu);
    if ((bits & 1) && !waker && !here.curr && here.nr_running == 0 && p.allowed.test(this_cpu)) return this_cpu;
    if ((bits & 2) && sync && vcpu_pack_room(p, this_cpu)) return this_cpu;
    if (bits & 4) {
        if (!available_idle_cpu(prev) && vcpu_pack_room(p, prev)) return prev;
        if (vcpu_pack_room(p, this_cpu)) return this_cpu;
        for (int c = p.allowed.first(); c >= 0; c = p.allowed.next(c + 1))
            if (!available_idle_cpu(c) && vcpu_pack_room(p, c)) return c;
    }
    return -1;
}

int Scheduler::select_task_rq_fair(Task& p, int prev, uint32_t wake_flags, const Task* waker, int this_cpu) {
    const bool sync = (wake_flags & WF_SYNC) != 0;
    const uint32_t sd_flag = wake_flags & 0xF;
    int new_cpu = prev;
    bool want_affine = false;
    SelectCtx ctx{*this, p, waker, this_cpu, prev, wake_flags, sync};
    if (explain_)
        obs_->select_fair({p.id, p.comm, prev, waker ? waker->id : -1, waker ? waker->comm : std::string(), this_cpu,
                           wake_flags});
    if (wake_flags & WF_TTWU) {
        if (prof_.vcpu_pack != 0) {
            const int c = vcpu_pack_select(p, waker, this_cpu, prev, sync);
            if (c >= 0) {
                select_outcome(SelectOutcome::vcpu_pack, c);
                return c;
            }
        }
        if (waker) record_wakee(const_cast<Task&>(*waker), p);
        for (const auto& rule : policy_.rules) {
            const int c = rule->early(ctx);
            if (c >= 0 && p.allowed.test(c)) {
                select_outcome(SelectOutcome::policy_early, c);
                if (explain_) obs_->policy_rule({rule->name(), PolicyHook::early, c});
                return c;
            }
        }
        if ((wake_flags & WF_CURRENT_CPU) && p.allowed.test(this_cpu)) {
            select_outcome(SelectOutcome::current_cpu, this_cpu);
            return this_cpu;
        }
        // EAS decides before wake_affine while the root domain is not overutilized; WF_SYNC plays no
        // part in mainline. A policy's `in_feec` rule comes first (kernel/wake_policy.h).
        if (eas_) {
            FeecEv ev;
            ev.prev = prev;
            ev.overutilized_cpu = eas_snapshot();
            int c = -1;
            if (ev.overutilized_cpu < 0) {
                for (const auto& rule : policy_.rules) {
                    const int r = rule->in_feec(ctx);
                    if (r >= 0 && p.allowed.test(r)) {
                        c = r;
                        ev.result = FeecResult::policy;
                        ev.cpu = r;
                        if (explain_) obs_->policy_rule({rule->name(), PolicyHook::in_feec, r});
                        break;
                    }
                }
                if (c < 0) c = find_energy_efficient_cpu(p, prev, this_cpu, steps_ ? &ev : nullptr);
            }
            if (steps_) obs_->feec(ev);
            if (c >= 0) {
                select_outcome(SelectOutcome::eas, c);
                return c;
            }
        }
        const bool wide = wake_wide(p, waker, this_cpu);
        want_affine = !wide && p.allowed.test(this_cpu);
        sel_.wide = wide;
        if (steps_)
            obs_->want_affine({waker ? waker->wakee_flips : 0, p.wakee_flips, sd_.of(this_cpu).sd_llc_size, wide, want_affine});
    }
    int slow_level = -1;
    const auto& levels = sd_.of(this_cpu).levels;
    for (size_t i = 0; i < levels.size(); ++i) {
        const SchedDomain& D = levels[i];
        if (want_affine && (D.flags & SD_WAKE_AFFINE) && D.span.test(prev)) {
            if (explain_) obs_->domain({D.name, this_cpu != prev, sync});
            if (this_cpu != prev) new_cpu = wake_affine(static_cast<int>(i), p, waker, this_cpu, prev, sync);
            for (const auto& rule : policy_.rules) {
                const int c = rule->after_wake_affine(ctx, new_cpu);
                if (c >= 0 && p.allowed.test(c)) {
                    select_outcome(SelectOutcome::policy_affine, c);
                    if (explain_) obs_->policy_rule({rule->name(), PolicyHook::after_wake_affine, c});
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
        new_cpu = sched_balance_find_dst_cpu(p, this_cpu, prev, sd_flag);
        select_outcome(SelectOutcome::slow_path, new_cpu);
    } else if (wake_flags & WF_TTWU) {
        new_cpu = select_idle_sibling(p, waker, this_cpu, prev, new_cpu);
    }
    return new_cpu;
}

}  // namespace wakesim
