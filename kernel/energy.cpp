// Energy-aware scheduling in the wake path, as v6.19 runs it: build_perf_domains() and
// sched_is_eas_possible() (kernel/sched/topology.c), cpu_overutilized() and the root domain's
// overutilized state, and find_energy_efficient_cpu() with its helpers eenv_pd_busy_time(),
// eenv_pd_max_util() and compute_energy() (kernel/sched/fair.c), with uclamp as v6.19 applies it
// there (util_fits_cpu() with the max-aggregated clamps, the clamped OPP of eenv_pd_max_util()).
// Utilisation is wakesim's PELT (kernel/pelt.cpp); thermal pressure is not modelled.
#include <cmath>
#include <algorithm>
#include <climits>

#include "kernel/pelt.h"
#include "kernel/sched.h"

namespace wakesim {

void Scheduler::build_perf_domains() {
    pds_.clear();
    eas_ = false;
    eas_cpu_.assign(static_cast<size_t>(topo_.nr_cpus()), EasCpu{});
    if (prof_.energy_model.empty() || !energy_model_mismatch(prof_, topo_).empty()) return;
    for (const auto& spec : prof_.energy_model) {
        EmPerfDomain pd;
        for (int c : spec.cpu_ids) pd.cpus.set(c);
        pd.nr_cpus = static_cast<int>(spec.cpu_ids.size());
        pd.capacity = capacity_of(spec.cpu_ids.front());
        // The domain's own highest OPP: with per-policy clocks its OPPs are the cpufreq policy's
        // (cpufreq_policy_mismatch() checks), so this is the f_max schedutil and PELT scale by.
        const int64_t fmax = spec.opps.back().khz;
        std::vector<EmPerfState> all;
        for (const auto& o : spec.opps) {
            // em_init_performance(): capacity scaled by frequency; em_compute_costs(): power x 10 / performance.
            const int64_t perf = std::max<int64_t>(1, pd.capacity * o.khz / fmax);
            all.push_back({perf, o.power_uw * 10 / perf});
        }
        // A state whose cost is not below every faster state's is inefficient (em_compute_costs()).
        int64_t prev_cost = INT64_MAX;
        for (size_t i = all.size(); i-- > 0;)
            if (all[i].cost < prev_cost) {
                prev_cost = all[i].cost;
                pd.states.push_back(all[i]);
            }
        std::reverse(pd.states.begin(), pd.states.end());
        pds_.push_back(std::move(pd));
    }
    // sched_is_eas_possible(): asymmetric capacities, no SMT, schedutil everywhere (frequency
    // invariance is always there: PELT is scaled by the CPU's speed).
    eas_ = sd_.asym_active() && !sd_.smt_active() && prof_.governor == "schedutil";
}

// cpu_overutilized(): the CPU's utilisation does not fit its capacity: util_fits_cpu() with the
// runqueue's clamps (fits_capacity(), the 1280/1024 margin, when nothing is clamped); -1 (only
// the uclamp_min hint does not fit) is not overutilized.
bool Scheduler::cpu_overutilized(int cpu) const {
    if (!eas_) return false;
    if (!uclamp_used_) return !(cpu_util(cpu) * 1280.0 < capacity_of(cpu) * 1024.0);
    const RqClamp r = uclamp_rq(cpu);
    return util_fits_cpu(cpu_util(cpu), r.min, r.max, cpu) == 0;
}

// The CPUs' signals once per EAS wakeup (feec reads them many times): util_avg and runnable_avg
// as last updated (cpu_util() reads cfs_rq->avg: an idle CPU's until a blocked-load update), the
// runqueue's util_est. Returns rd_overutilized_cpu(): the CPU that set rd->overutilized, -1: clear.
int Scheduler::eas_snapshot() {
    for (int c = 0; c < topo_.nr_cpus(); ++c) {
        const Rq& rq = rq_of(c);
        EasCpu& e = eas_cpu_[static_cast<size_t>(c)];
        e.util = rq.pelt.util_avg;
        e.runnable = rq.pelt.runnable_avg;
        e.util_est = rq.util_est;
    }
    return rd_overutilized_cpu();  // is_rd_overutilized()
}

// check_update_overutilized_status(): rd->overutilized is set where an enqueue or a busy tick
// finds the CPU's cpu_util_cfs() (util_est included) not fitting its capacity; only a load
// balance at the root level clears it (update_sd_lb_stats()).
void Scheduler::check_update_overutilized_status(int cpu) {
    if (!eas_ || rd_overutilized_ || !cpu_overutilized(cpu)) return;
    rd_overutilized_ = true;
    rd_overutilized_by_ = cpu;
}

// cpu_util(cpu, p, dst_cpu, boost), v6.19: util_avg (with boost, raised to runnable_avg) less p's
// where p leaves the CPU, plus p's where it comes, then raised, with UTIL_EST, to the runqueue's
// util_est plus p's own estimate on dst_cpu; capped at the CPU's capacity. From eas_snapshot().
double Scheduler::eas_cpu_util(int cpu, const Task& p, int dst_cpu, double p_util_avg, bool boost) const {
    const EasCpu& e = eas_cpu_[static_cast<size_t>(cpu)];
    double u = boost ? std::max(e.util, e.runnable) : e.util;
    if (p.cpu == cpu && dst_cpu != cpu)
        u = std::max(0.0, u - p_util_avg);
    else if (p.cpu != cpu && dst_cpu == cpu)
        u += p_util_avg;
    // The waking p is neither queued nor current: its estimate is in no runqueue's util_est.
    if (cfg_.features.on(Feat::UTIL_EST)) u = std::max(u, e.util_est + (dst_cpu == cpu ? p.pelt.util_est : 0.0));
    return std::min<double>(u, capacity_of(cpu));
}

// compute_energy(): eenv_pd_max_util() (each CPU's utilisation with schedutil's 1.25 headroom,
// sugov_effective_cpu_perf(), the highest sets the OPP) and the domain's busy time, with p's
// when it is placed there, priced by em_cpu_energy(). With uclamp, each CPU's request lies
// between its runqueue's clamps (effective_cpu_util()), and p's own clamps join dst_cpu's: its
// uclamp_min raises the floor, its uclamp_max replaces an idle runqueue's cap or raises a busy one's.
double Scheduler::compute_energy(const EmPerfDomain& pd, const Task& p, int dst_cpu, double p_util_avg, double p_util,
                                 double pd_busy) const {
    double max_util = 0;
    if (!uclamp_used_) {
        for (int c = pd.cpus.first(); c >= 0; c = pd.cpus.next(c + 1)) {
            const double u = eas_cpu_util(c, p, dst_cpu, p_util_avg, true);
            max_util = std::max(max_util, std::min(u * 1.25, static_cast<double>(capacity_of(c))));
        }
    } else {
        for (int c = pd.cpus.first(); c >= 0; c = pd.cpus.next(c + 1)) {
            const double u = eas_cpu_util(c, p, dst_cpu, p_util_avg, true);
            const double cap = capacity_of(c);
            const RqClamp r = uclamp_rq(c);
            double lo = r.min, hi = std::min(cap, static_cast<double>(r.max));
            if (c == dst_cpu) {
                lo = std::max(lo, static_cast<double>(p.uclamp_min));
                hi = r.idle ? p.uclamp_max : std::max(hi, static_cast<double>(p.uclamp_max));
            }
            max_util = std::max(max_util, std::max(lo, std::min(u * 1.25, hi)));
        }
    }
    max_util = std::min(max_util, static_cast<double>(pd.capacity));
    double busy = pd_busy;
    if (dst_cpu >= 0) busy = std::min(static_cast<double>(pd.capacity) * pd.nr_cpus, busy + p_util);
    return em_cpu_energy(pd, max_util, busy, pd.capacity);
}

// find_energy_efficient_cpu(), v6.19, on eas_snapshot()'s utilisation: per performance domain the
// fitting CPU with the most spare capacity, and prev; the energy each adds to its domain; the
// lowest wins, prev unless a candidate adds strictly less (no margin since "sched/fair: Remove the
// energy margin in feec()", 2022). Returns -1 when no asymmetric-capacity domain of this_cpu
// spans prev.
int Scheduler::find_energy_efficient_cpu(const Task& p, int prev, int this_cpu, FeecEv* ev) {
    const CpuDomains& cd = sd_.of(this_cpu);
    int level = cd.sd_asym_cpucapacity;
    if (level >= 0)
        while (level < static_cast<int>(cd.levels.size()) && !cd.levels[static_cast<size_t>(level)].span.test(prev)) ++level;
    if (level < 0 || level >= static_cast<int>(cd.levels.size())) {
        if (ev) ev->result = FeecResult::no_asym_domain;
        return -1;
    }
    const CpuSet& span = cd.levels[static_cast<size_t>(level)].span;
    auto done = [&](FeecResult r, int cpu) {
        if (ev) {
            ev->result = r;
            ev->cpu = cpu;
        }
        return cpu;
    };
    // uclamp_eff_value(p, ...), when uclamp is used.
    const int p_umin = uclamp_used_ ? p.uclamp_min : 0, p_umax = uclamp_used_ ? p.uclamp_max : 1024;
    // task_util_est(): nothing to place by energy without an estimate or a uclamp_min.
    const Pelt synced = wakee_pelt_synced(p);  // sync_entity_load_avg()
    const double p_util = task_util_est(p, synced.util_avg);
    if (p_util < 1.0 && p_umin == 0) return done(FeecResult::no_util, prev);
    const double p_util_avg = synced.util_avg;

    double prev_delta = -1, best_delta = -1, best_cpu_delta = -1;  // -1: ULONG_MAX
    int best_cpu = -1, prev_fits = -1, best_fits = -1;
    int best_actual_cap = 0, prev_actual_cap = 0;
    for (const EmPerfDomain& pd : pds_) {
        double prev_spare = -1, max_spare = -1;
        int max_spare_cpu = -1, max_fits = -1;
        // One pair of clamps per domain, as v6.19 declares them: a busy runqueue's clamps stay for
        // the CPUs after it in the domain.
        int umin = p_umin, umax = p_umax;
        for (int c = pd.cpus.first(); c >= 0; c = pd.cpus.next(c + 1)) {
            if (!span.test(c) || !p.allowed.test(c)) continue;
            const double util = eas_cpu_util(c, p, c, p_util_avg);
            const int cap = capacity_of(c);
            // util_fits_cpu() on the unclamped util with the clamps max-aggregated over p and a
            // busy runqueue (uclamp_rq_util_with() without its clamp()): 1, -1 (only p's
            // uclamp_min does not fit) or 0, a CPU the task would overutilize, skipped.
            int fits = 1;
            if (!uclamp_used_) {
                if (!(util * 1280.0 < cap * 1024.0)) continue;
            } else {
                const RqClamp r = uclamp_rq(c);
                if (!r.idle) {
                    umin = std::max(r.min, p_umin);
                    umax = std::max(r.max, p_umax);
                }
                fits = util_fits_cpu(util, umin, umax, c);
                if (fits == 0) continue;
            }
            const double spare = std::max(0.0, cap - util);
            if (c == prev) {
                prev_spare = spare;
                prev_fits = fits;
            } else if (fits > max_fits || (fits == max_fits && spare > max_spare)) {
                max_spare = spare;
                max_spare_cpu = c;
                max_fits = fits;
            }
        }
        if (max_spare_cpu < 0 && prev_spare < 0) continue;
        // eenv_pd_busy_time(): the domain's utilisation without p, at most its capacity.
        double pd_busy = 0;
        for (int c = pd.cpus.first(); c >= 0; c = pd.cpus.next(c + 1)) pd_busy += eas_cpu_util(c, p, -1, p_util_avg);
        pd_busy = std::min(pd_busy, static_cast<double>(pd.capacity) * pd.nr_cpus);
        const double base = compute_energy(pd, p, -1, p_util_avg, p_util, pd_busy);
        if (prev_spare > -1) {
            double e = compute_energy(pd, p, prev, p_util_avg, p_util, pd_busy);
            if (e < base) return done(FeecResult::util_changed, prev);
            prev_delta = e - base;
            prev_actual_cap = pd.capacity;
            if (best_delta < 0 || prev_delta < best_delta) best_delta = prev_delta;
        }
        if (max_spare_cpu >= 0 && max_spare > prev_spare) {
            if (max_fits < best_fits) continue;
            if (max_fits < 0 && pd.capacity <= best_actual_cap) continue;
            double cur = compute_energy(pd, p, max_spare_cpu, p_util_avg, p_util, pd_busy);
            if (cur < base) return done(FeecResult::util_changed, prev);
            cur -= base;
            if (max_fits > 0 && best_fits > 0 && best_delta >= 0 && cur >= best_delta) continue;
            best_delta = cur;
            best_cpu_delta = cur;
            best_cpu = max_spare_cpu;
            best_fits = max_fits;
            best_actual_cap = pd.capacity;
        }
    }
    // -1 stands for ULONG_MAX in the comparisons.
    const bool best_below_prev = best_delta >= 0 && (prev_delta < 0 || best_delta < prev_delta);
    const bool take = best_cpu >= 0 && (best_fits > prev_fits || (best_fits > 0 && best_below_prev) ||
                                        (best_fits < 0 && best_actual_cap > prev_actual_cap));
    if (ev) {
        ev->prev_delta = prev_delta;
        ev->best_cpu = best_cpu;
        ev->best_delta = best_cpu_delta;
    }
    return take ? done(FeecResult::best, best_cpu) : done(FeecResult::prev_kept, prev);
}

}  // namespace wakesim
